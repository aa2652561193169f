fn main() -> std::process::ExitCode {
    panel::tools::main(panel::tools::merge::command(), panel::tools::merge::run)
}
