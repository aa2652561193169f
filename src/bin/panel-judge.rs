fn main() -> std::process::ExitCode {
    // A judge's supervisor and confine stage are this binary run again.
    if let Some(code) = panel::tools::stage() {
        return code;
    }
    panel::tools::main(panel::tools::judge::command(), panel::tools::judge::run)
}
