//! A polars `DataFrame` as an Arrow C stream (`ArrowArrayStream`, the Arrow C stream
//! interface): one struct array per record batch, the columns' buffers shared, never copied
//! row by row. Python reads it through `__arrow_c_stream__` (the Arrow PyCapsule interface),
//! so any Arrow consumer — polars' `DataFrame(obj)`, pyarrow, DuckDB — takes it without
//! knowing this library's polars version.
//!
//! polars-arrow's FFI module (compiled with polars already) does the export; the batches use
//! polars' newest layout (string views), which polars imports without converting.

use polars::prelude::{ArrowDataType, ArrowField, CompatLevel, DataFrame};
use polars_arrow::array::{Array, StructArray};
use polars_arrow::ffi::{ArrowArrayStream, export_iterator};

/// Exports `df` as a stream of struct arrays, one per record batch.
pub fn stream(mut df: DataFrame) -> ArrowArrayStream {
    // Record batches need every column cut at the same rows.
    df.align_chunks_par();
    let fields: Vec<ArrowField> =
        df.columns().iter().map(|c| c.field().to_arrow(CompatLevel::newest())).collect();
    let dtype = ArrowDataType::Struct(fields);
    let batches: Vec<Box<dyn Array>> = df
        .iter_chunks(CompatLevel::newest(), false)
        .map(|batch| {
            let len = batch.len();
            Box::new(StructArray::new(dtype.clone(), len, batch.into_arrays(), None)) as Box<dyn Array>
        })
        .collect();
    let field = ArrowField::new("".into(), dtype, false);
    export_iterator(Box::new(batches.into_iter().map(Ok)), field)
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::*;
    use polars_arrow::ffi::ArrowArrayStreamReader;

    /// Reads a stream back through polars-arrow's importer (the other side of the
    /// interface, as a consumer in another library reads it).
    #[allow(unsafe_code)] // importing from the C interface is unsafe by nature
    fn read_back(stream: ArrowArrayStream) -> DataFrame {
        let mut reader = unsafe { ArrowArrayStreamReader::try_new(Box::new(stream)) }.unwrap();
        let ArrowDataType::Struct(fields) = reader.field().dtype().clone() else {
            panic!("not a struct stream: {:?}", reader.field())
        };
        let mut out: Option<DataFrame> = None;
        while let Some(array) = unsafe { reader.next() } {
            let array = array.unwrap();
            let s = array.as_any().downcast_ref::<StructArray>().unwrap();
            let columns: Vec<Column> = fields
                .iter()
                .zip(s.values())
                .map(|(f, a)| Series::from_arrow(f.name.clone(), a.clone()).unwrap().into_column())
                .collect();
            let df = DataFrame::new(s.len(), columns).unwrap();
            out = Some(match out {
                None => df,
                Some(mut acc) => {
                    acc.vstack_mut(&df).unwrap();
                    acc
                }
            });
        }
        out.unwrap()
    }

    #[test]
    fn a_frame_of_several_chunks_and_every_column_type_reads_back_equal() {
        let a = df!(
            "source" => ["a.dat", "a.dat"],
            "time_s" => [1.5f64, 2.25],
            "time_ps" => [1i64, -2],
            "cpu" => [0u32, 3],
            "sector" => [Some(u64::MAX), None],
            "comm" => [Some("kworker/0:1"), None],
        )
        .unwrap();
        let b = df!(
            "source" => ["b.dat"],
            "time_s" => [f64::NAN],
            "time_ps" => [i64::MIN],
            "cpu" => [1u32],
            "sector" => [Some(7u64)],
            "comm" => [Some("fio")],
        )
        .unwrap();
        let mut both = a.clone();
        both.vstack_mut(&b).unwrap();
        assert_eq!(both.first_col_n_chunks(), 2);
        let back = read_back(stream(both.clone()));
        assert_eq!(back.shape(), (3, 6));
        assert_eq!(back.schema(), both.schema());
        assert!(back.equals_missing(&both), "{back}\n{both}");
    }

    #[test]
    fn an_empty_frame_keeps_its_columns() {
        let empty = df!("key" => Vec::<String>::new(), "latency_ns" => Vec::<f64>::new()).unwrap();
        let back = read_back(stream(empty.clone()));
        assert_eq!(back.height(), 0);
        assert_eq!(back.schema(), empty.schema());
    }
}
