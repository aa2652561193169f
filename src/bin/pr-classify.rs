fn main() -> std::process::ExitCode {
    panel::run::main(panel::classify::command(), panel::classify::run)
}
