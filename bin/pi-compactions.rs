fn main() -> std::process::ExitCode {
    pi_jsonl::tool::main::<pi_jsonl::cmd::compactions::Compactions>()
}
