fn main() -> std::process::ExitCode {
    panel::tools::main(
        panel::tools::classify::command(),
        panel::tools::classify::run,
    )
}
