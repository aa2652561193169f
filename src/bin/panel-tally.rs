fn main() -> std::process::ExitCode {
    panel::tools::main(panel::tools::tally::command(), panel::tools::tally::run)
}
