use std::process::ExitCode;

fn main() -> ExitCode {
    latscope::cli::main()
}
