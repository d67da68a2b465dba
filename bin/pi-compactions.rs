fn main() -> std::process::ExitCode {
    pi_jsonl::compactions::main()
}
