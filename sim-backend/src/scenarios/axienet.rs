use crate::report::Analyzer;
use crate::scenario::{Scenario, ScenarioError};
use crate::simulation::Model;
pub fn build(s: &Scenario) -> Result<Box<dyn Model>, ScenarioError> {
    Err(s.bad_value("scenario", "todo"))
}
pub fn measure(_s: &Scenario, _a: &mut Analyzer<'_>) -> Result<(), ScenarioError> {
    Ok(())
}
