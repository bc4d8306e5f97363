//! The `latscope` extension module (pyo3): `open`, `sim`, `Capture` and `Error`. Each
//! method is one [`Session`] call made without the GIL; its table crosses to Python as an
//! Arrow C stream ([`crate::arrow::stream`], a PyCapsule named `arrow_array_stream`) that
//! `polars.DataFrame` imports. Engine errors become `latscope.Error` with the engine's text
//! (the file and line or byte, the table and column).

use crate::session::Session;
use polars::prelude::DataFrame;
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyCapsule, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::ffi::CString;
use std::path::PathBuf;

pyo3::create_exception!(
    latscope,
    Error,
    PyException,
    "A capture, a spec, a query or a scenario latscope could not read or run; the text says \
     which file and where (line or byte), or which table and column."
);

fn engine_error(e: latscope_engine::EngineError) -> PyErr {
    Error::new_err(e.to_string())
}

/// A table as an Arrow C stream: `__arrow_c_stream__` hands its columns to any Arrow
/// consumer without copying them (`polars.DataFrame(t)`, `pyarrow.table(t)`).
#[pyclass(frozen, module = "latscope", name = "ArrowTable")]
struct ArrowTable {
    df: DataFrame,
}

#[pymethods]
impl ArrowTable {
    /// The table as a PyCapsule named `arrow_array_stream` (the Arrow PyCapsule interface);
    /// `requested_schema` is not used (the interface lets a producer keep its own).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let stream = crate::arrow::stream(self.df.clone());
        PyCapsule::new(py, stream, Some(CString::from(c"arrow_array_stream")))
    }

    fn __len__(&self) -> usize {
        self.df.height()
    }
}

/// `df` as a polars DataFrame, imported through the Arrow C stream interface.
fn to_polars(py: Python<'_>, df: DataFrame) -> PyResult<Py<PyAny>> {
    let polars = py.import("polars").map_err(|e| {
        PyErr::new::<pyo3::exceptions::PyImportError, _>(format!(
            "latscope returns polars DataFrames: pip install polars ({e})"
        ))
    })?;
    let table = Py::new(py, ArrowTable { df })?;
    Ok(polars.getattr("DataFrame")?.call1((table,))?.unbind())
}

/// Analyses as given: one text (a preset or a rule), a list of them, or none.
fn texts(analyses: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    match analyses {
        None => Ok(Vec::new()),
        Some(a) if a.is_none() => Ok(Vec::new()),
        Some(a) => match a.extract::<String>() {
            Ok(one) => Ok(vec![one]),
            Err(_) => a.extract::<Vec<String>>().map_err(|_| {
                PyTypeError::new_err("analyses: a preset or rule spec (str), or a list of them")
            }),
        },
    }
}

/// A capture: files opened (`latscope.open`) or a simulated run (`latscope.sim`). Every
/// method returns a polars DataFrame equal to what `latscope query` prints for the same
/// inputs.
#[pyclass(module = "latscope", name = "Capture")]
struct Capture {
    session: Session,
}

#[pymethods]
impl Capture {
    /// Every event of every source: `source, time_s, time_ps, cpu, pid, comm, name`
    /// (`SELECT * FROM events`).
    fn events(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let session = &self.session;
        let df = py.detach(|| session.events()).map_err(engine_error)?;
        to_polars(py, df)
    }

    /// One table whole: an event name (`"block_rq_issue"`: the event columns and one typed
    /// column per field) or `events`, `annotations`, `edges`, `tracks`, `pairs`, `windows`.
    fn table(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        let session = &self.session;
        let df = py.detach(|| session.table(name)).map_err(engine_error)?;
        to_polars(py, df)
    }

    /// The names `table` and `query` take: the fixed tables, then one per event name.
    fn tables(&self) -> Vec<String> {
        self.session.table_names()
    }

    /// The measured pairs of `analyses` — a preset (`"block"`, `"chain:irq=5"`), a rule
    /// spec (`"rq=block_rq_issue -> block_rq_complete by dev,sector"`) or a list of them —
    /// in the fleet dataset's pairs schema (`analysis`, `key`, `start_s`, `end_s`,
    /// `latency_ns`, …). None: a simulated run's own analyses, else every preset that finds
    /// events. With `include_errors`, pairs that end at a failed decode are kept.
    #[pyo3(signature = (analyses = None, *, include_errors = false))]
    fn pairs(
        &self,
        py: Python<'_>,
        analyses: Option<&Bound<'_, PyAny>>,
        include_errors: bool,
    ) -> PyResult<Py<PyAny>> {
        let analyses = texts(analyses)?;
        let session = &self.session;
        let df = py.detach(|| session.pairs(&analyses, include_errors)).map_err(engine_error)?;
        to_polars(py, df)
    }

    /// Runs a decoder stack (`"i2c:scl=SCL,sda=SDA"`, `"sigrok:can:can_rx=CAN_RX"`) on every
    /// input that has its channels; its events join the other tables. Returns the capture's
    /// annotations (`source, decoder, row, start_s, end_s, …, text, fields`).
    fn decode(&mut self, py: Python<'_>, spec: &str) -> PyResult<Py<PyAny>> {
        let session = &mut self.session;
        let df = py.detach(|| session.decode(spec)).map_err(engine_error)?;
        to_polars(py, df)
    }

    /// SQL over the capture's tables on polars' SQL engine, as `latscope query --sql`:
    /// `pairs` and `windows` hold `analyses` (as `pairs` takes them), else every preset that
    /// finds events.
    #[pyo3(signature = (sql, *, analyses = None, include_errors = false))]
    fn query(
        &self,
        py: Python<'_>,
        sql: &str,
        analyses: Option<&Bound<'_, PyAny>>,
        include_errors: bool,
    ) -> PyResult<Py<PyAny>> {
        let analyses = texts(analyses)?;
        let session = &self.session;
        let df = py.detach(|| session.query(sql, &analyses, include_errors)).map_err(engine_error)?;
        to_polars(py, df)
    }

    /// The inputs as named in the `source` columns: the paths as given, or the scenario.
    #[getter]
    fn sources(&self) -> Vec<String> {
        self.session.capture().path_names()
    }

    /// The analyses `pairs()` runs when none is named: a simulated run's own (what
    /// `latscope sim` reports); empty for files.
    #[getter]
    fn analyses(&self) -> Vec<String> {
        self.session.own_analyses().to_vec()
    }

    fn __repr__(&self) -> String {
        format!("latscope.Capture({:?})", self.session.capture().path_names())
    }
}

/// Opens capture files — kernel traces (ftrace text, trace.dat, Perfetto), logic and scope
/// captures (sigrok .sr, VCD/FST/GHW, CSV) — detected by content. `paths`: one path or a
/// list. `align`: one aligned timeline, as `latscope report --align` takes it.
#[pyfunction]
#[pyo3(signature = (paths, *, align = None))]
fn open(py: Python<'_>, paths: &Bound<'_, PyAny>, align: Option<String>) -> PyResult<Capture> {
    let paths: Vec<PathBuf> = match paths.extract::<PathBuf>() {
        Ok(one) => vec![one],
        Err(_) => paths
            .extract::<Vec<PathBuf>>()
            .map_err(|_| PyTypeError::new_err("paths: a path (str or os.PathLike) or a list of them"))?,
    };
    let session = py.detach(|| Session::open(&paths, align.as_deref())).map_err(engine_error)?;
    Ok(Capture { session })
}

/// Runs a simulator scenario (a built-in name — `e1000e-mta`, `litesdcard`,
/// `imx8mq-cpuidle`, `axienet-napi` — or a scenario .toml) and returns a capture of the
/// simulated run. `settings` overrides settings and calibration constants by their dotted
/// keys, as `latscope sim --set KEY=VALUE` does: `{"socs.imx8mq.deep_exit_us": 80,
/// "pm_qos": "on"}`. `seed` fixes the run (same seed, same trace); `duration` stops it at a
/// simulated time (`"50ms"`).
#[pyfunction]
#[pyo3(signature = (scenario, settings = None, *, seed = None, duration = None))]
fn sim(
    py: Python<'_>,
    scenario: &str,
    settings: Option<&Bound<'_, PyDict>>,
    seed: Option<u64>,
    duration: Option<String>,
) -> PyResult<Capture> {
    let mut sets = Vec::new();
    if let Some(settings) = settings {
        for (key, value) in settings.iter() {
            let key: String =
                key.extract().map_err(|_| PyTypeError::new_err("settings: keys are dotted names (str)"))?;
            sets.push(format!("{key}={}", setting_text(&key, &value)?));
        }
    }
    let session =
        py.detach(|| Session::sim(scenario, &sets, seed, duration.as_deref())).map_err(engine_error)?;
    Ok(Capture { session })
}

/// A Python value as `--set KEY=VALUE` writes it: TOML for numbers, booleans and lists,
/// text as it is.
fn setting_text(key: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    // A bool is an int in Python: asked first.
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(if b.is_true() { "true" } else { "false" }.to_owned());
    }
    if value.is_instance_of::<PyInt>() {
        return Ok(value.str()?.to_string());
    }
    if value.is_instance_of::<PyFloat>() {
        // repr: the shortest text that reads back as the same float.
        return Ok(value.repr()?.to_string());
    }
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(s.to_string());
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for item in value.try_iter()? {
            let item = item?;
            items.push(match item.cast::<PyString>() {
                // Inside a TOML array text is quoted.
                Ok(s) => serde_json::to_string(&s.to_string())
                    .map_err(|e| PyTypeError::new_err(format!("settings[{key:?}]: {e}")))?,
                Err(_) => setting_text(key, &item)?,
            });
        }
        return Ok(format!("[{}]", items.join(", ")));
    }
    Err(PyTypeError::new_err(format!(
        "settings[{key:?}]: a number, bool, str or list, not {}",
        value.get_type().name()?
    )))
}

/// latscope's Python API: captures and simulated runs as polars DataFrames.
#[pymodule]
#[pyo3(name = "latscope")]
fn latscope_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(sim, m)?)?;
    m.add_class::<Capture>()?;
    m.add_class::<ArrowTable>()?;
    m.add("Error", m.py().get_type::<Error>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
