fn main() -> std::process::ExitCode {
    panel::run::main(panel::tally::command(), panel::tally::run)
}
