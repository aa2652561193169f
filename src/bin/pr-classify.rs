fn main() -> std::process::ExitCode {
    panel::tools::main(
        panel::tools::pr_classify::command(),
        panel::tools::pr_classify::run,
    )
}
