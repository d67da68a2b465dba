fn main() -> std::process::ExitCode {
    pi_jsonl::sessions::main()
}
