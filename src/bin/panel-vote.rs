fn main() -> std::process::ExitCode {
    panel::run::main(panel::vote::command(), panel::vote::run)
}
