fn main() -> std::process::ExitCode {
    pi_jsonl::tools::main()
}
