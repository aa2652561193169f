fn main() -> std::process::ExitCode {
    panel::run::main(panel::merge::command(), panel::merge::run)
}
