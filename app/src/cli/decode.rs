//! `latscope decode FILE --decoder SPEC [--format text|csv|json] [-o OUT]`: protocol decoders
//! over a capture's channels, annotations printed or written atomically (the engine's
//! [`latscope_engine::decode`] and [`latscope_engine::annotations`]).

use anyhow::Result;
use latscope_engine::annotations::{AnnotationFormat, AnnotationWriter, write_annotations};
use latscope_engine::{Output, Registry};
use latscope_engine::{channels, decode};
use latscope_importers::LoadControl;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct DecodeArgs {
    /// A capture with digital (or analog) channels: .sr, VCD/FST, CSV.
    pub file: PathBuf,
    /// A decoder stack, e.g. `sd:clk=CLK,cmd=CMD,dat0=DAT0` or `spi:clk=SCK,mosi=MOSI,miso=MISO,cs=CS | sd-spi`;
    /// repeatable. Decoders: uart, spi, i2c, sd, sd-spi.
    #[arg(long = "decoder", value_name = "SPEC", required = true)]
    pub decoders: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: DecodeFormat,
    /// Write here (atomically; never over the input) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DecodeFormat {
    Text,
    Csv,
    Json,
}

impl From<DecodeFormat> for AnnotationFormat {
    fn from(f: DecodeFormat) -> Self {
        match f {
            DecodeFormat::Text => AnnotationFormat::Text,
            DecodeFormat::Csv => AnnotationFormat::Csv,
            DecodeFormat::Json => AnnotationFormat::Json,
        }
    }
}

pub fn run(args: &DecodeArgs) -> Result<()> {
    let registry = Registry::native();
    let inputs = std::slice::from_ref(&args.file);
    let output = Output::of(args.output.as_deref());
    output.check(inputs)?;
    let (source, decoded, names) = if decode::decodes_file(&registry, &args.file, &args.decoders)? {
        // Straight from the file: annotations are written as the decoders hand them on.
        let mut writer = AnnotationWriter::new(args.format.into()).on_this_thread();
        let mut result = None;
        let written = output.write("the annotations", inputs, |w| {
            let d =
                decode_beside_writing(&registry, args, &mut |source, batch| writer.write(w, source, batch));
            match d {
                Ok(Some(d)) => {
                    writer.finish(w, &args.file, &d.decoded.errors)?;
                    result = Some(Ok(d));
                    Ok(())
                }
                Ok(None) => Err(std::io::Error::other("the capture could not be decoded as it is read")),
                Err(e) => {
                    result = Some(Err(e));
                    Err(std::io::Error::other("decoding failed"))
                }
            }
        });
        // The decode's own error, rather than the write it stopped.
        let d = match (result, written) {
            (Some(Err(e)), _) => return Err(e.into()),
            (_, Err(e)) => return Err(e.into()),
            (Some(Ok(d)), Ok(())) => d,
            (None, Ok(())) => anyhow::bail!("{}: nothing was decoded", args.file.display()),
        };
        (d.source, d.decoded, d.channels)
    } else {
        let source = latscope_engine::open(&args.file, &LoadControl::new())?;
        let decoded = decode::decode_all(&registry, &source, &args.decoders)?;
        let names = channels::channels_of(&source);
        output.write("the annotations", inputs, |w| {
            write_annotations(w, &args.file, &source, &decoded, args.format.into())
        })?;
        (source, decoded, names)
    };
    // What the workbench's decoder dialog says of the same channels.
    for spec in &args.decoders {
        for note in channels::spec_notes(&registry, spec, &names) {
            eprintln!("latscope: {}: warning: {note}", args.file.display());
        }
    }
    for w in source.diagnostics.summary() {
        eprintln!("latscope: {}: warning: {w}", args.file.display());
    }
    for (kind, n) in &decoded.errors {
        eprintln!("latscope: {}: {kind}: {n} error annotation(s)", args.file.display());
    }
    // The process ends after this command: freeing hundreds of thousands of annotations
    // and the capture's edge tracks one by one would only delay the exit.
    std::mem::forget(decoded);
    std::mem::forget(source);
    Ok(())
}

/// [`decode::decode_file_to`] on a thread of its own, while this one hands its batches to
/// `write` as they come: the decode goes on while a batch is formatted and written, instead
/// of waiting for it (formatting a large decode takes as long as decoding it). A failed write
/// stops the decode, whose error then says so.
fn decode_beside_writing(
    registry: &Registry,
    args: &DecodeArgs,
    write: &mut dyn FnMut(&latscope_model::Source, &[latscope_decoders::Annotation]) -> std::io::Result<()>,
) -> latscope_engine::Result<Option<decode::FileDecode>> {
    use latscope_decoders::Annotation;
    use std::sync::mpsc::{channel, sync_channel};
    // One batch queued at most: the decode runs ahead of the writer by no more.
    let (full_tx, full_rx) = sync_channel::<(Option<latscope_model::Source>, Vec<Annotation>)>(1);
    // Written batches come back, so their memory is not faulted in again. They are emptied
    // on the decoding thread: the fields it allocated are then freed to its own allocator
    // cache, which its next annotations reuse, rather than to the writer's.
    let (empty_tx, empty_rx) = channel::<Vec<Annotation>>();
    std::thread::scope(|s| {
        let decoding = s.spawn(move || {
            let mut source_sent = false;
            decode::decode_file_to(registry, &args.file, &args.decoders, &mut |source, batch| {
                let mut empty = empty_rx.try_recv().unwrap_or_default();
                empty.clear();
                let full = std::mem::replace(batch, empty);
                let source = (!source_sent).then(|| source.clone());
                source_sent = true;
                full_tx
                    .send((source, full))
                    .map_err(|_| std::io::Error::other("the annotations' writer stopped"))
            })
        });
        let mut source = None;
        let mut failed = None;
        for (first, batch) in full_rx.iter() {
            source = source.or(first);
            if let Some(source) = &source
                && let Err(e) = write(source, &batch)
            {
                failed = Some(e);
                // Dropping the receiver stops the decode at its next batch.
                break;
            }
            let _ = empty_tx.send(batch);
        }
        drop(full_rx);
        let decoded = decoding.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        match failed {
            // The write's own error, not the decode's "the writer stopped".
            Some(e) => {
                Err(latscope_engine::EngineError::Output { what: "the annotations".into(), source: e })
            }
            None => decoded,
        }
    })
}
