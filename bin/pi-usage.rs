fn main() -> std::process::ExitCode {
    pi_jsonl::usage::main()
}
