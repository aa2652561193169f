fn main() -> std::process::ExitCode {
    panel::tools::main(panel::tools::vote::command(), panel::tools::vote::run)
}
