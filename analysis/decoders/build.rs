//! Sets the `have_*` cfgs that mark the tests needing a tool or the shared corpus
//! (latscope-testkit; docs/ARCHITECTURE.md, "Tests").

use latscope_testkit::Need;

fn main() {
    latscope_testkit::probe(&[Need::SigrokCli, Need::Python3, Need::SharedCorpus]);
}
