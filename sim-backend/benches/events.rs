//! Simulated events per second: each scenario run to completion (engine, models and trace
//! building; no report, no writers). `cargo bench -p latscope-sim`.

use latscope_sim::{Simulation, prepare};

fn main() {
    divan::main();
}

fn run(name: &str, sets: &[&str]) -> usize {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let Ok(s) = prepare(name, &sets, None, None) else { return 0 };
    let Ok(mut sim) = Simulation::new(s) else { return 0 };
    while sim.run_batch(1 << 16) > 0 {}
    sim.events()
}

/// The 32 MiB copy of the calibration targets, read then write (~0.6 M trace events).
#[divan::bench(sample_count = 5)]
fn litesdcard_32mib(b: divan::Bencher<'_, '_>) {
    let n = run("litesdcard", &[]);
    b.counter(divan::counter::ItemsCount::new(n)).bench(|| run("litesdcard", &[]));
}

#[divan::bench(sample_count = 5)]
fn axienet_200ms(b: divan::Bencher<'_, '_>) {
    let n = run("axienet-napi", &[]);
    b.counter(divan::counter::ItemsCount::new(n)).bench(|| run("axienet-napi", &[]));
}

#[divan::bench(sample_count = 5)]
fn imx8mq_64mib(b: divan::Bencher<'_, '_>) {
    let n = run("imx8mq-cpuidle", &[]);
    b.counter(divan::counter::ItemsCount::new(n)).bench(|| run("imx8mq-cpuidle", &[]));
}
