#![allow(clippy::unwrap_used, clippy::expect_used)]
use latscope_analysis::spec::*;
use std::path::Path;

#[test]
#[ignore]
fn explore() {
    let files = std::env::var("FILES").unwrap();
    let specs = std::env::var("SPECS").unwrap();
    for f in files.split(',') {
        let src = latscope_importers::open(Path::new(f), &latscope_importers::LoadControl::new()).unwrap();
        let srcs = vec![src];
        for s in specs.split(';') {
            let spec = parse_spec(s).unwrap();
            match run_spec(&spec, &srcs) {
                Ok(os) => {
                    for o in os {
                        let lat = o.latencies();
                        let mean = if lat.is_empty() { 0 } else { lat.iter().sum::<i64>() / lat.len() as i64 };
                        println!("{f} {s}: n={} us={} ue={} mean={}ps notes={:?} win={} first={:?}", o.samples.len(), o.unmatched_start, o.unmatched_end, mean, o.notes, o.windows.len(), o.samples.first());
                        for st in &o.stages { println!("   {} n={} us={} notes={:?}", st.name, st.samples.len(), st.unmatched_start, st.notes); }
                    }
                }
                Err(e) => println!("{f} {s}: ERR {e}"),
            }
        }
    }
}
