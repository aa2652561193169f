fn main() -> std::process::ExitCode {
    panel::tools::main(panel::tools::judge::command(), panel::tools::judge::run)
}
