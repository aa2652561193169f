fn main() -> std::process::ExitCode {
    // A judge's supervisor and confine stage are this binary run again.
    if let Some(code) = panel::tools::stage() {
        return code;
    }
    panel::tools::main(
        panel::tools::pr_classify::command(),
        panel::tools::pr_classify::run,
    )
}
