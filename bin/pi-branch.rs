fn main() -> std::process::ExitCode {
    pi_jsonl::branch::main()
}
