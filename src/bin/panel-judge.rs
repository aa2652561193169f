fn main() -> std::process::ExitCode {
    panel::run::main(panel::judge::command(), panel::judge::run)
}
