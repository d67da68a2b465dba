//! Passwords that command lines give, and the files some commands read: after an option
//! named as a credential (`--password V`) or that a program reads as one (`sshpass -p V`,
//! `zip -P V`, `keytool -storepass V`), by their place among a command's words (`htpasswd
//! -b FILE USER V`, `sqlplus USER/V@DB`), piped to a program that reads one on its standard
//! input (`echo V | sudo -S …`, `… | docker login --password-stdin`), in a `.netrc` and in a
//! `config` command. What each rule finds is masked as `keyed` ([`super::mask`]).
//!
//! A program counts when it is a word of the command before what it reads ([`Command::names`]):
//! after the last line break, `;`, `&` or `|`, so `docker login … && docker run -p 80:80`
//! keeps its port, and `sudo zip -P V`, `/usr/bin/zip -P V`, `docker exec c redis-cli -a V`
//! are read as the program's own.

use super::find::{
    self, is_name_byte, is_reference, line_start, names_a_credential_in_text, quote_at,
    quoted_value, same_name, skip_blanks, table_cell_value, unquoted_end, value_at, PROSE_WORDS,
};
use std::cell::OnceCell;

/// The words [`keyed_in_commands_spans`] starts from: a `.netrc`'s `machine`, a `config`
/// command, and the programs that take a password by its place ([`placed`]).
pub const COMMAND_WORDS: [&str; 10] = [
    "machine",
    "config",
    "chpasswd",
    "rabbitmqctl",
    "sqlplus",
    "sqlldr",
    "expdp",
    "impdp",
    "wpa_passphrase",
    "nmcli",
];

/// Passwords commands and files give without `=`, `:` or an option, in order of where they
/// are found: `each(start, end)` of each value.
///
/// - A `.netrc` (`machine HOST login USER password PASS`, on one line or several): after
///   each `machine` that starts a word, the file's tokens are read as pairs, the value after
///   `password` masked, until a token that is none of its keywords.
/// - A setting named as a credential given to a `config` or `configure` command as its next
///   word (`git config --global github.token V`, `npm config set //host/:_authToken V`,
///   `yarn config set npmAuthToken V`), right after one of [`CONFIG_PROGRAMS`]: the first
///   word after the command that is no option and not `set`, `add` or `get` is the name;
///   the word after it, the value.
/// - The settings of a remote `rclone config create` gives ([`rclone_config_values`]).
/// - The programs that take a password by its place among their words ([`placed`]), Windows'
///   `net user` and `net use` ([`net_password`]), found at `word_blanks`.
/// - At each `|`: what `echo` or `printf` pipes to a command that stores a secret
///   ([`piped_to_store`]), and the value a Markdown table's row gives a credential's name
///   ([`table_cell_value`]).
/// - At each of `capital_blanks` (a blank after a capital letter), after a name in capitals
///   that names a credential: the value a command gives it by words, or the here-string a
///   command that stores a secret reads ([`after_capitals`]).
/// - At each of `word_blanks`: after `by` (any case), SQL's password for a user after
///   `IDENTIFIED BY` ([`identified_by`]); after `key`, `secret` and `phrase`, a key or a
///   passphrase one space after its name ([`find::key_and_value`]); after `et`, or a `t`
///   four bytes after an `a` (any case), what `net user`, `net use`, `vault login` and
///   `ansible-vault encrypt_string` give ([`after_net_or_vault`]). Their words among the
///   detectors' anchors cost `--keep-text` 4.2 % more instructions (the anchors' search,
///   Teddy, meets more candidates with every word), searches of their own (`memmem`) 6.3 %,
///   this class 1 % (BENCHMARKS.md, round 48).
///
/// Not a value: a reference (`$PASS`), another option, a word of prose. `holds(word)`: whether
/// the text holds one of [`COMMAND_WORDS`] (found with the detectors' anchors, in the same
/// pass: searches of their own took 4-6 % of `--keep-text`'s instructions).
pub fn keyed_in_commands_spans(
    text: &str,
    holds: impl Fn(&'static str) -> bool,
    capital_blanks: impl Iterator<Item = usize>,
    word_blanks: impl Iterator<Item = usize>,
    mut each: impl FnMut(usize, usize),
) {
    let b = text.as_bytes();
    let mut found = Vec::new();
    for pipe in memchr::memchr_iter(b'|', b) {
        found.extend(piped_to_store(b, pipe));
        found.extend(table_cell_value(b, pipe));
    }
    for blank in capital_blanks {
        found.extend(after_capitals(b, blank));
    }
    for blank in word_blanks {
        found.extend(match b[blank - 1] | 0x20 {
            b'y' if blank >= 2 && b[blank - 2] | 0x20 == b'e' => find::key_and_value(b, blank),
            b'y' => identified_by(b, blank),
            _ => after_net_or_vault(b, blank).or_else(|| find::key_and_value(b, blank)),
        });
    }
    for word in COMMAND_WORDS {
        if !holds(word) {
            continue;
        }
        let places = memchr::memmem::find_iter(b, word).filter(|&at| starts_a_word(b, at));
        for at in places {
            let after = at + word.len();
            match word {
                "machine" => netrc_passwords(b, after, &mut found),
                "config" => {
                    found.extend(config_value(b, at));
                    rclone_config_values(b, at, &mut found);
                }
                _ if ends_a_word(b, after) => found.extend(placed(b, word, at, after)),
                _ => {}
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    for (start, end) in found {
        each(start, end);
    }
}

/// Whether a word starts at `at`: the text's start, white space before it, or what opens a
/// command's word (a `/` of the program's path, a quote, a backtick, `(`).
fn starts_a_word(b: &[u8], at: usize) -> bool {
    at == 0
        || b[at - 1].is_ascii_whitespace()
        || matches!(b[at - 1], b'/' | b'"' | b'\'' | b'`' | b'(')
}

/// Whether a word ends at `at`: the text's end, white space, or what ends a command.
fn ends_a_word(b: &[u8], at: usize) -> bool {
    b.get(at)
        .is_none_or(|&c| c.is_ascii_whitespace() || matches!(c, b';' | b'&' | b'|' | b')'))
}

/// The words of `b[from..to]`, each as its start and end: what [`separator_len`] separates,
/// each ending too before a quote written out (`\"`, `\'`, `\\\"`).
fn words(b: &[u8], from: usize, to: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    let (b, mut i) = (&b[..to], from);
    std::iter::from_fn(move || {
        let start = skip_separators(b, i);
        i = word_end(b, start);
        (start < i).then_some((start, i))
    })
}

/// The escape written out at `b[i]` in text that quotes JSON (once or more: `\n`,
/// `\\\n`): its length and the byte it escapes.
fn written_escape(b: &[u8], i: usize) -> Option<(usize, u8)> {
    let run = b.get(i..)?.iter().take_while(|&&c| c == b'\\').count();
    let c = *b.get(i + run)?;
    (run > 0 && matches!(c, b'n' | b'r' | b't' | b'"' | b'\'')).then_some((run + 1, c))
}

/// How long the separator of words at `b[i]` is: 1 for white space, the escape's length
/// for a line break or a tab written out ([`written_escape`]), else 0.
fn separator_len(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(c) if c.is_ascii_whitespace() => 1,
        Some(b'\\') => match written_escape(b, i) {
            Some((n, b'n' | b'r' | b't')) => n,
            _ => 0,
        },
        _ => 0,
    }
}

/// `i` moved past the separators at it.
fn skip_separators(b: &[u8], mut i: usize) -> usize {
    loop {
        match separator_len(b, i) {
            0 => return i,
            n => i += n,
        }
    }
}

/// The end of the word that starts at `i`: white space or an escape written out (after the
/// quote written out that opens it, if one does).
fn word_end(b: &[u8], mut i: usize) -> usize {
    if let Some((n, b'"' | b'\'')) = written_escape(b, i) {
        i += n;
    }
    while i < b.len()
        && !b[i].is_ascii_whitespace()
        && (b[i] != b'\\' || written_escape(b, i).is_none())
    {
        i += 1;
    }
    i
}

/// A value that may be a credential: not empty, not a reference, not another option, not a
/// word of prose.
fn may_be_value(v: &[u8]) -> bool {
    !v.is_empty()
        && v[0] != b'-'
        && !is_reference(v)
        && !PROSE_WORDS
            .iter()
            .any(|w| v.eq_ignore_ascii_case(w.as_bytes()))
}

/// The value of the word `ws..we`, quoted or not, when it [`may_be_value`].
fn word_value(b: &[u8], (ws, we): (usize, usize)) -> Option<(usize, usize)> {
    let (vs, ve) = value_at(b, ws, we);
    may_be_value(&b[vs..ve]).then_some((vs, ve))
}

/// The values after `password` in the `.netrc` tokens after a `machine` (`from`: just past it).
fn netrc_passwords(b: &[u8], from: usize, found: &mut Vec<(usize, usize)>) {
    let mut tokens = words(b, from, b.len());
    // The machine's name.
    if tokens.next().is_none() {
        return;
    }
    while let Some((ks, ke)) = tokens.next() {
        match &b[ks..ke] {
            b"default" => continue,
            b"machine" | b"login" | b"account" => {
                if tokens.next().is_none() {
                    return;
                }
            }
            b"password" => {
                let Some((vs, ve)) = tokens.next() else {
                    return;
                };
                let quote = quote_at(b, vs);
                let (vs, ve) = quote.map_or((vs, ve), |q| quoted_value(b, vs, q));
                let value = may_be_value(&b[vs..ve]);
                if value {
                    found.push((vs, ve));
                }
                // A quoted password may hold blanks: the tokens after it are not read.
                if !value || quote.is_some() {
                    return;
                }
            }
            _ => return,
        }
    }
}

/// The start of the command that goes on at `at`: after the last line break, `;`, `&` or
/// `|` before it.
fn command_start(b: &[u8], at: usize) -> usize {
    b[..at]
        .iter()
        .rposition(|c| matches!(c, b'\n' | b';' | b'&' | b'|'))
        .map_or(0, |i| i + 1)
}

/// The end of the command that goes on at `at`: the next line break, `;`, `&` or `|`.
fn command_end(b: &[u8], at: usize) -> usize {
    b[at..]
        .iter()
        .position(|c| matches!(c, b'\n' | b';' | b'&' | b'|'))
        .map_or(b.len(), |i| at + i)
}

/// Commands that store a secret read on their standard input, as words that follow one
/// another, each one of its choices: `wrangler secret put NAME`, `gh secret set NAME`,
/// `docker secret create NAME -`, `vercel env add NAME`, `doppler secrets set NAME`, `gcloud
/// secrets create NAME --data-file=-` (and `gcloud secrets versions add`), `firebase
/// functions:secrets:set NAME`, `pass insert NAME`, `keyring set SERVICE USER`,
/// `ansible-vault encrypt_string`; and commands that encode or encrypt it: `base64` (a
/// Kubernetes secret's value, a Basic header's `USER:PASS`: the encoded text is as good as
/// the secret, so what is decoded is masked too), `openssl base64`, `openssl enc`.
const SECRET_STORES: &[&[&[&[u8]]]] = &[
    &[
        &[b"wrangler", b"gh", b"docker", b"podman"],
        &[b"secret"],
        &[b"put", b"set", b"create"],
    ],
    &[&[b"vercel"], &[b"env"], &[b"add"]],
    &[&[b"doppler"], &[b"secrets"], &[b"set"]],
    &[&[b"gcloud"], &[b"secrets"], &[b"create", b"versions"]],
    &[&[b"firebase"], &[b"functions:secrets:set"]],
    &[&[b"pass"], &[b"insert"]],
    &[&[b"keyring"], &[b"set"]],
    &[&[b"ansible-vault"], &[b"encrypt_string"]],
    &[&[b"base64"]],
    &[&[b"openssl"], &[b"base64", b"enc"]],
];

/// Whether the command in `b[from..to]` stores a secret it reads ([`SECRET_STORES`], among
/// its first 8 words: its program may follow others, `npx wrangler`, `sudo docker`).
fn stores_a_secret(b: &[u8], from: usize, to: usize) -> bool {
    let mut words = [&b[..0]; 8];
    let mut n = 0;
    for (s, e) in arguments(b, from, to).take(words.len()) {
        words[n] = &b[s..e];
        n += 1;
    }
    let words = &words[..n];
    SECRET_STORES.iter().any(|store| {
        (words.windows(store.len()))
            .any(|w| store.iter().zip(w).all(|(choices, w)| choices.contains(w)))
    })
}

/// What `echo` or `printf` pipes to a command that stores a secret ([`stores_a_secret`]),
/// through the `|` at `pipe`.
fn piped_to_store(b: &[u8], pipe: usize) -> Option<(usize, usize)> {
    let consumer = pipe + 1;
    if b.get(consumer) == Some(&b'|') {
        return None;
    }
    (stores_a_secret(b, consumer, command_end(b, consumer)))
        .then(|| piped_value(b, consumer))
        .flatten()
}

/// The last three letters, in capitals, of the names of credentials [`after_capitals`] looks at
/// (`PASSWORD`, `PWD`, `PASSWD`, `PASS`, `SECRETS`, `PASSWORDS`, `COOKIES`, `CREDENTIALS`,
/// `COOKIE`, `PASSPHRASE`, `KEY_BASE`, `SECRET`, `TOKEN`, `AUTHORIZATION`, `AUTH`,
/// `CREDENTIAL`, `BEARER`, `KEY`, and `PW` after the blank or the `_` before it); a test holds
/// them to [`names_a_credential_in_text`].
const CREDENTIAL_ENDS: &[[u8; 3]] = &[
    *b"ORD", *b"PWD", *b"SWD", *b"ASS", *b"ETS", *b"RDS", *b"IES", *b"ALS", *b"KIE", *b"ASE",
    *b"RET", *b"KEN", *b"ION", *b"UTH", *b"IAL", *b"RER", *b"KEY", *b"_PW", *b" PW", *b"\tPW",
];

/// The password SQL gives a user after `IDENTIFIED BY` (`CREATE USER app IDENTIFIED BY 'V'`,
/// `ALTER USER … IDENTIFIED WITH caching_sha2_password BY 'V'`, Oracle's `IDENTIFIED BY V`,
/// `CONNECT TO u IDENTIFIED BY V` of a database link), `blank` right after the `BY` (any
/// case): the argument after it, or after `BY PASSWORD` or `BY VALUES` the hash that follows.
/// In lower case (`create user app identified by 'V'`), which prose writes too (`the user is
/// identified by their e-mail`), only in a statement with the word `user`, `role`, `grant` or
/// `connect` before it, and only a value quoted or holding a digit or a sign (a `.` or `,`
/// that ends it aside).
pub(super) fn identified_by(b: &[u8], blank: usize) -> Option<(usize, usize)> {
    let by = blank - 2;
    if by > 0 && !b[by - 1].is_ascii_whitespace() {
        return None;
    }
    let keyword = |(s, e): (usize, usize), w: &[u8]| b[s..e].eq_ignore_ascii_case(w);
    // The word that ends before `to`, blanks between.
    let word_before = |to: usize| {
        let e = b[..to].iter().rposition(|c| !c.is_ascii_whitespace())? + 1;
        let s = b[..e]
            .iter()
            .rposition(u8::is_ascii_whitespace)
            .map_or(0, |i| i + 1);
        Some((s, e))
    };
    // `IDENTIFIED BY`, or `IDENTIFIED WITH PLUGIN BY`.
    let mut identified = word_before(by)?;
    if !keyword(identified, b"IDENTIFIED") {
        let with = word_before(identified.0)?;
        identified =
            word_before(with.0).filter(|&i| keyword(with, b"WITH") && keyword(i, b"IDENTIFIED"))?;
    }
    let mut args = arguments(b, blank, command_end(b, blank));
    let mut value = args.next()?;
    if keyword(value, b"PASSWORD") || keyword(value, b"VALUES") {
        value = args.next()?;
    }
    let (vs, ve) = value;
    if !may_be_value(&b[vs..ve]) {
        return None;
    }
    if &b[identified.0..identified.1] == b"IDENTIFIED" {
        return Some(value);
    }
    let sql = words(b, command_start(b, identified.0), identified.0).any(|w| {
        [&b"user"[..], b"role", b"grant", b"connect"]
            .iter()
            .any(|k| keyword(w, k))
    });
    let quoted = vs > 0 && matches!(b[vs - 1], b'\'' | b'"' | b'`');
    // A sentence's stop after a word is no sign of a password.
    let word = b[vs..ve].trim_ascii_end();
    let word = word
        .strip_suffix(b".")
        .or(word.strip_suffix(b","))
        .unwrap_or(word);
    let marked = word
        .iter()
        .any(|c| c.is_ascii_digit() || c.is_ascii_punctuation());
    (sql && (quoted || marked)).then_some(value)
}

/// The words that set a variable by words ([`after_capitals`]).
const SETTERS: &[&[u8]] = &[b"setx", b"setenv", b"set", b"env:set", b"ENV"];

/// The value given after a word in capitals that ends at `blank`: to a variable named in
/// capitals (letters, digits and `_`) as a credential (a name in lower case, `setenv db_pass
/// V`, is not looked at):
///
/// - by words, the value the argument after the name: `setx NAME V` (Windows), `setenv NAME
///   V` (csh, `launchctl setenv`), `ENV NAME V` (a Dockerfile's older form, `ENV` first on
///   its line), fish's `set NAME V`, `doppler secrets set NAME V`, `netlify env:set NAME V`
///   ([`SETTERS`], the word right before the name). Not a value: what [`may_be_value`] turns
///   down; after `set`, a word of lower-case letters alone (`set API_KEY before you start`).
/// - as a here-string to a command that stores a secret ([`stores_a_secret`]): `wrangler
///   secret put NAME <<< V`, `firebase functions:secrets:set NAME <<< V`, `vercel env add
///   NAME production <<< V` ([`here_string`]).
pub(super) fn after_capitals(b: &[u8], blank: usize) -> Option<(usize, usize)> {
    // Most capitals before a blank end no credential's name (`SELECT `, `WHERE `): the last
    // three letters of each name [`names_a_credential_in_text`] takes, in capitals, first.
    let last = blank.checked_sub(3).map(|i| [b[i], b[i + 1], b[i + 2]]);
    if !last.is_some_and(|w| CREDENTIAL_ENDS.contains(&w)) || !matches!(b[blank], b' ' | b'\t') {
        return None;
    }
    let ns = blank
        - b[..blank]
            .iter()
            .rev()
            .take_while(|&&c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
            .count();
    let spaced = ns > 0 && matches!(b[ns - 1], b' ' | b'\t');
    if !spaced || !names_a_credential_in_text(&b[ns..blank]) {
        return None;
    }
    let end = command_end(b, blank);
    let mut args = arguments(b, blank, end);
    let (vs, ve) = args.next()?;
    // A here-string right after the name, or after the store's other arguments (`vercel env
    // add NAME production <<< V`).
    let here = if b[vs..ve].starts_with(b"<<<") {
        Some(vs)
    } else {
        args.find(|&(s, e)| b[s..e].starts_with(b"<<<"))
            .map(|(s, _)| s)
    };
    if let Some(here) = here {
        if stores_a_secret(b, command_start(b, ns), ns) {
            return here_string(b, here);
        }
    }
    if here == Some(vs) {
        return None;
    }
    let we = b[..ns].iter().rposition(|c| !matches!(c, b' ' | b'\t'))? + 1;
    let ws = b[..we]
        .iter()
        .rposition(|c| {
            c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'`' | b';' | b'&' | b'|' | b'(')
        })
        .map_or(0, |i| i + 1);
    let setter = &b[ws..we];
    if !SETTERS.contains(&setter) {
        return None;
    }
    // A Dockerfile's `ENV` starts its line (in text that quotes it, after a `\n` written out).
    let first = ws == 0 || b[ws - 1] == b'\n' || b[..ws].ends_with(b"\\n");
    if setter == b"ENV" && !first {
        return None;
    }
    let value = &b[vs..ve];
    let prose = setter == b"set" && value.iter().all(u8::is_ascii_lowercase);
    (may_be_value(value) && !prose).then_some((vs, ve))
}

/// Programs whose `config` (or `configure`) command sets a setting: `git config`, `npm
/// config set`, `aws configure set`.
const CONFIG_PROGRAMS: &[&[u8]] = &[
    b"git",
    b"npm",
    b"pnpm",
    b"yarn",
    b"bun",
    b"aws",
    b"gh",
    b"glab",
    b"pip",
    b"pip3",
    b"poetry",
    b"bundle",
    b"composer",
    b"conda",
    b"az",
    b"gcloud",
];

/// The values `rclone config` (its `config` at `at`) gives the settings of a remote named as
/// credentials, as pairs of words after `create NAME TYPE`, `update NAME` or `password NAME`
/// (`rclone config create s3r s3 access_key_id X secret_access_key V`, `… sftp pass V`).
fn rclone_config_values(b: &[u8], at: usize, found: &mut Vec<(usize, usize)>) {
    if !b[..at].ends_with(b"rclone ") {
        return;
    }
    let end = command_end(b, at);
    let mut args = arguments(b, at + "config".len(), end);
    let skip = match args.next().map(|(s, e)| &b[s..e]) {
        Some(b"create") => 2,
        Some(b"update" | b"password") => 1,
        _ => return,
    };
    let mut args = args.skip(skip).filter(|&(s, _)| b[s] != b'-');
    while let (Some((ns, ne)), Some(value)) = (args.next(), args.next()) {
        if names_a_credential_in_text(&b[ns..ne]) && may_be_value(&b[value.0..value.1]) {
            found.push(value);
        }
    }
}

/// The value a `config` command (the word at `at`, right after one of [`CONFIG_PROGRAMS`])
/// gives a setting named as a credential.
fn config_value(b: &[u8], at: usize) -> Option<(usize, usize)> {
    let command = &b[at..command_end(b, at)];
    let verb = command.iter().position(u8::is_ascii_whitespace)?;
    if !matches!(&command[..verb], b"config" | b"configure") {
        return None;
    }
    // The word before, after what opens it (`"git`, `$(git`, `X=$(git`, a backtick).
    let pe = b[..at].iter().rposition(|c| !c.is_ascii_whitespace())? + 1;
    let ps = b[..pe]
        .iter()
        .rposition(|c| c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'`' | b'(' | b'='))
        .map_or(0, |i| i + 1);
    if !CONFIG_PROGRAMS.contains(&&b[ps..pe]) {
        return None;
    }
    let end = at + command.len();
    let mut words = words(b, at + verb, end)
        .skip_while(|&(s, e)| b[s] == b'-' || matches!(&b[s..e], b"set" | b"add" | b"get"));
    let (ns, ne) = words.next()?;
    if !names_a_credential_in_text(&b[ns..ne]) {
        return None;
    }
    let (vs, _) = words.next()?;
    let (vs, ve) = value_at(b, vs, unquoted_end(b, vs));
    may_be_value(&b[vs..ve]).then_some((vs, ve))
}

/// What a program that takes a password by its place among its words gives (`program`, one
/// of [`COMMAND_WORDS`] after the first two, or `login` and `encrypt_string` after `vault`
/// and `ansible-vault` ([`after_net_or_vault`]), ends at `after`; the command's word starts
/// at `at`):
///
/// - `chpasswd`: the password of the `USER:PASS` piped to it ([`piped_value`]) or given as
///   a here-string (`chpasswd <<< 'USER:PASS'`): what follows the `:`.
/// - `rabbitmqctl add_user USER PASS` (and `change_password`, `authenticate_user`).
/// - Oracle's `sqlplus`, `sqlldr`, `expdp`, `impdp`: the password of their first argument
///   that is no option, or of a `userid=`, when it is `USER/PASS` or `USER/PASS@DB`
///   (`sqlplus / as sysdba` and `sqlplus /nolog` give none).
/// - `wpa_passphrase SSID PASS`.
/// - `nmcli`: the argument after a word `password` or `psk`, or one ending `.password` or
///   `.psk` (`nmcli dev wifi connect HOME password V`, `nmcli con modify X wifi-sec.psk V`).
/// - HashiCorp's `vault login TOKEN`, as a command ([`opens_command`]): its first argument
///   that is no option and no `NAME=VALUE` (`vault login -method=userpass username=ana`
///   gives none; a `password=V` there is [`super::find::keyed_at_sign`]'s).
/// - `ansible-vault encrypt_string V`: its first argument that is no option nor an option's
///   value ([`ANSIBLE_VAULT_VALUED`]).
fn placed(b: &[u8], program: &str, at: usize, after: usize) -> Option<(usize, usize)> {
    let end = command_end(b, after);
    let mut args = arguments(b, after, end);
    let value = |a: Option<(usize, usize)>| a.filter(|&(s, e)| may_be_value(&b[s..e]));
    match program {
        "login" => {
            let token = |&(s, e): &(usize, usize)| {
                b[s..e].first() != Some(&b'-') && !b[s..e].contains(&b'=')
            };
            value(
                args.find(token)
                    .filter(|_| opens_command(b, at))
                    .map(|a| unquoted(b, a)),
            )
        }
        "encrypt_string" => {
            while let Some((s, e)) = args.next() {
                let arg = &b[s..e];
                if ANSIBLE_VAULT_VALUED.contains(&arg) {
                    args.next();
                } else if arg.first() != Some(&b'-') {
                    return value(Some(unquoted(b, (s, e))));
                }
            }
            None
        }
        "chpasswd" => {
            let given = match args.next() {
                Some((s, e)) if &b[s..e] == b"<<<" => value(args.next()),
                _ => piped_value(b, command_start(b, after)),
            };
            after_byte(b, given?, b':')
        }
        "rabbitmqctl" => {
            let verb = |&(s, e): &(usize, usize)| {
                matches!(
                    &b[s..e],
                    b"add_user" | b"change_password" | b"authenticate_user"
                )
            };
            args.find(verb)?;
            value(args.nth(1))
        }
        "wpa_passphrase" => value(args.filter(|&(s, _)| b[s] != b'-').nth(1)),
        "nmcli" => {
            let names = |&(s, e): &(usize, usize)| {
                let w = &b[s..e];
                w == b"password" || w == b"psk" || w.ends_with(b".password") || w.ends_with(b".psk")
            };
            args.find(names)?;
            value(args.next())
        }
        _ => {
            // Oracle's tools: `USER/PASS@DB`, as a `userid=` or the first argument.
            let args: Vec<_> = args.collect();
            let userid = |&(s, e): &(usize, usize)| {
                let given = e - s > 7 && b[s..s + 7].eq_ignore_ascii_case(b"userid=");
                given.then_some((s + 7, e))
            };
            let (ws, we) = (args.iter().find_map(userid))
                .or_else(|| args.iter().copied().find(|&(s, _)| b[s] != b'-'))?;
            let slash = memchr::memchr(b'/', &b[ws..we]).filter(|&i| i > 0)?;
            let vs = ws + slash + 1;
            let ve = memchr::memchr(b'@', &b[vs..we]).map_or(we, |i| vs + i);
            value(Some((vs, ve)))
        }
    }
}

/// The argument `s..e` ([`arguments`]) without the quote that ends a command quoted whole,
/// when it is no quoted value (`{"command":"net user ana V"}`: `V`, not `V"}`).
fn unquoted(b: &[u8], (s, e): (usize, usize)) -> (usize, usize) {
    if s > 0 && matches!(b[s - 1], b'"' | b'\'' | b'`') {
        return (s, e);
    }
    let quote = b[s..e]
        .iter()
        .position(|c| matches!(c, b'"' | b'\'' | b'`'));
    (s, quote.map_or(e, |i| s + i))
}

/// The password a FreeRDP client's option gives, its `:` at `sign`: `/p:V` (the user's),
/// `/gp:V` (the gateway's), `/pth:HASH` (the password's hash, which logs in as well), quoted
/// or not, in a command that names `xfreerdp`, `wlfreerdp` or `sdl-freerdp` (with a `3` or
/// not). Found at the signs [`super::find::keyed_at_sign`] looks at, not by a word of its own
/// among the anchors ([`keyed_in_commands_spans`] says why).
#[cold]
#[inline(never)]
pub(super) fn freerdp_option(b: &[u8], sign: usize) -> Option<(usize, usize)> {
    let name = [&b"/p"[..], b"/gp", b"/pth"]
        .into_iter()
        .find(|n| b[..sign].ends_with(n))?;
    let slash = sign - name.len();
    if !(slash == 0 || matches!(b[slash - 1], b' ' | b'\t' | b'\'' | b'"')) {
        return None;
    }
    let start = command_start(b, slash);
    let named = memchr::memmem::find_iter(&b[start..slash], b"freerdp").any(|i| {
        let (at, end) = (start + i, start + i + "freerdp".len());
        let end = end + usize::from(b.get(end) == Some(&b'3'));
        let client = ["x", "wl", "sdl-"]
            .iter()
            .any(|p| b[..at].ends_with(p.as_bytes()) && starts_a_word(b, at - p.len()));
        client && ends_a_word(b, end)
    });
    if !named {
        return None;
    }
    // Quoted whole (`'/p:V W'`), or its value quoted (`/p:"V W"`), or neither.
    let (vs, ve) = match quote_at(b, slash.saturating_sub(1)).filter(|_| slash > 0) {
        Some(q) => (sign + 1, quoted_value(b, slash - 1, q).1),
        None => unquoted(b, value_at(b, sign + 1, word_end(b, sign + 1))),
    };
    may_be_value(&b[vs..ve]).then_some((vs, ve))
}

/// The options of `ansible-vault encrypt_string` that take the next argument as their value.
const ANSIBLE_VAULT_VALUED: &[&[u8]] = &[
    b"--name",
    b"-n",
    b"--stdin-name",
    b"--vault-id",
    b"--encrypt-vault-id",
    b"--vault-password-file",
    b"--vault-pass-file",
    b"--output",
];

/// Whether the word at `at` is a command's program: its command's first word, after
/// assignments (`VAULT_ADDR=… vault login`) and `sudo`, or a word a quote, a backtick or `(`
/// opens (`{"command":"net user …"}`, `` `net user …` ``). In prose (`run net user to list
/// them`) it is none.
fn opens_command(b: &[u8], at: usize) -> bool {
    at > 0 && matches!(b[at - 1], b'"' | b'\'' | b'`' | b'(')
        || words(b, command_start(b, at), at)
            .all(|(s, e)| &b[s..e] == b"sudo" || b[s..e].contains(&b'='))
}

/// What the command whose first two words meet at `blank` (a blank after `et` or `vault`) gives:
/// Windows' `net use` and `net user` (any case, as Windows reads them: [`net_password`]),
/// HashiCorp's `vault login` and `ansible-vault encrypt_string` ([`placed`]).
pub(super) fn after_net_or_vault(b: &[u8], blank: usize) -> Option<(usize, usize)> {
    let (first, second) = (&b[..blank], &b[blank + 1..]);
    let any_case = |w: &[u8], at: usize| {
        b.get(at..at + w.len())
            .is_some_and(|x| x.eq_ignore_ascii_case(w))
    };
    if blank >= 3 && any_case(b"net", blank - 3) && any_case(b"use", blank + 1) {
        let at = blank - 3;
        return starts_a_word(b, at)
            .then(|| net_password(b, at, blank + 4))
            .flatten();
    }
    let (program, word) = if first.ends_with(b"ansible-vault") {
        ("ansible-vault", "encrypt_string")
    } else if first.ends_with(b"vault") {
        ("vault", "login")
    } else {
        return None;
    };
    let (at, after) = (blank - program.len(), blank + 1 + word.len());
    let given =
        starts_a_word(b, at) && second.starts_with(word.as_bytes()) && ends_a_word(b, after);
    given.then(|| placed(b, word, at, after)).flatten()
}

/// The password Windows' `net` command gives, `at` its `net use` (ending at `after`), as a
/// command ([`opens_command`]): `net user NAME PASS` (`/add`, `/domain` and the other
/// options, which start with `/`, aside), `net use [DEVICE] \\HOST\SHARE PASS` (the
/// argument after the share; `/user:NAME` may come before it). `*` (asked for) is none.
fn net_password(b: &[u8], at: usize, after: usize) -> Option<(usize, usize)> {
    let user = b.get(after).is_some_and(|c| c | 0x20 == b'r');
    let after = after + usize::from(user);
    if !ends_a_word(b, after) || !opens_command(b, at) {
        return None;
    }
    let mut args =
        arguments(b, after, command_end(b, after)).filter(|&(s, _)| b.get(s) != Some(&b'/'));
    let (vs, ve) = unquoted(
        b,
        if user {
            args.nth(1)?
        } else {
            args.skip_while(|&(s, _)| b.get(s) != Some(&b'\\')).nth(1)?
        },
    );
    let value = &b[vs..ve];
    (value != b"*" && may_be_value(value)).then_some((vs, ve))
}

/// The arguments of the command in `b[from..to]`, roughly as a shell splits them: each a
/// quoted value (without its quotes) or a run of what is not white space, as its start and
/// end. A quote left open ends them.
fn arguments(b: &[u8], from: usize, to: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut i = from;
    std::iter::from_fn(move || {
        let start = skip_separators(&b[..to], i);
        if start == to {
            return None;
        }
        let Some(q) = quote_at(b, start) else {
            i = word_end(&b[..to], start);
            return Some((start, i));
        };
        let (vs, ve) = quoted_value(b, start, q);
        // A quote not closed in the command ends them, for good.
        i = (ve + q.len()).min(to);
        (ve + q.len() <= to).then_some((vs, ve))
    })
}

/// What `echo` or `printf` pipes to the command that starts at `consumer` (right after its
/// `|`; the program's word may follow a quote that opens the command, `sh -c 'echo V | sudo
/// -S …'`, `{"command":"echo V | sudo -S …"}`): the first argument it writes that is no
/// option (after printf's format, when that holds a `%`: `printf '%s' V`), without the `\n`
/// printf would write after it. `None` when the command is not piped to, or not by `echo` or
/// `printf`.
fn piped_value(b: &[u8], consumer: usize) -> Option<(usize, usize)> {
    let pipe = consumer.checked_sub(1).filter(|&p| b[p] == b'|')?;
    if pipe > 0 && b[pipe - 1] == b'|' {
        return None;
    }
    let start = command_start(b, pipe);
    // The program: the command's first word, or one right after a quote that opens the
    // command in text that quotes it (`{"command":"echo`, `{\"c\":\"printf`).
    let quoted = ["echo ", "printf "].iter().find_map(|w| {
        let at = memchr::memmem::rfind(&b[start..pipe], w.as_bytes())? + start;
        let opened = at > start && matches!(b[at - 1], b'"' | b'\'');
        opened.then_some(at)
    });
    let mut args = arguments(b, quoted.unwrap_or(start), pipe);
    let (cs, ce) = args.next()?;
    let printf = match &b[cs..ce] {
        b"echo" => false,
        b"printf" => true,
        _ => return None,
    };
    let mut args = args.filter(|&(s, _)| b[s] != b'-');
    let mut value = args.next()?;
    if printf && memchr::memchr(b'%', &b[value.0..value.1]).is_some() {
        value = args.next()?;
    }
    let (vs, mut ve) = value;
    if b[vs..ve].ends_with(b"\\n") {
        ve -= 2;
    }
    may_be_value(&b[vs..ve]).then_some((vs, ve))
}

/// The here-string the command of the option at `dash` reads on its standard input (`sudo -S
/// <<< 'V' …`, `gh auth login --with-token <<< V`): the argument after its `<<<`, or glued
/// to it.
fn here_string(b: &[u8], dash: usize) -> Option<(usize, usize)> {
    let mut args = arguments(b, command_start(b, dash), command_end(b, dash));
    while let Some((s, e)) = args.next() {
        if !b[s..e].starts_with(b"<<<") {
            continue;
        }
        let given = match e - s {
            3 => args.next()?,
            _ => value_at(b, s + 3, e),
        };
        return may_be_value(&b[given.0..given.1]).then_some(given);
    }
    None
}

/// The command an option at `dash` belongs to, up to the option.
struct Command<'t> {
    b: &'t [u8],
    dash: usize,
    /// Where it starts ([`command_start`]), found the first time it is asked for.
    start: OnceCell<usize>,
}

impl<'t> Command<'t> {
    fn new(b: &'t [u8], dash: usize) -> Self {
        Command {
            b,
            dash,
            start: OnceCell::new(),
        }
    }

    fn start(&self) -> usize {
        *self.start.get_or_init(|| command_start(self.b, self.dash))
    }

    /// Where `word` ends as a word of the command before the option ([`starts_a_word`], and
    /// white space after it).
    fn find(&self, word: &str) -> Option<usize> {
        let start = self.start();
        let part = &self.b[start..self.dash];
        let at = memchr::memmem::find_iter(part, word).find(|&i| {
            let after = part.get(i + word.len());
            starts_a_word(part, i) && after.is_some_and(u8::is_ascii_whitespace)
        });
        at.map(|i| start + i + word.len())
    }

    /// Whether `word` is a word of the command before the option ([`Command::find`]).
    fn names(&self, word: &str) -> bool {
        self.find(word).is_some()
    }

    /// Whether the command names one of `programs`.
    fn names_any(&self, programs: &[&str]) -> bool {
        programs.iter().any(|p| self.names(p))
    }
}

/// How a program's option takes its value.
#[derive(Clone, Copy, PartialEq)]
enum Taken {
    /// After a blank: `-P PASS`.
    Apart,
    /// Glued to its one letter: `-pPASS` (7-Zip: `-p PASS` would be no password).
    Glued,
    /// Either way.
    Both,
}

/// An option a program reads a password by, whatever its name says.
struct ProgramOption {
    /// Its names, without their dashes.
    names: &'static [&'static str],
    /// The programs that read it so: one of them is a word of the option's command.
    programs: &'static [&'static str],
    /// A word the command holds too (`login`), or none.
    with: Option<&'static str>,
    taken: Taken,
}

/// Registry and cloud clients whose `login` takes a password with `-p`.
const LOGIN_CLIENTS: &[&str] = &[
    "docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras", "az", "cf", "oc",
];

/// The options programs read a password by ([`ProgramOption`]).
const PROGRAM_OPTIONS: &[ProgramOption] = &[
    ProgramOption {
        names: &["p"],
        programs: &["sshpass"],
        with: None,
        taken: Taken::Both,
    },
    ProgramOption {
        names: &["p"],
        programs: &["7z", "7za", "7zz", "7zr"],
        with: None,
        taken: Taken::Glued,
    },
    ProgramOption {
        names: &["p"],
        programs: LOGIN_CLIENTS,
        with: Some("login"),
        taken: Taken::Apart,
    },
    ProgramOption {
        names: &["p"],
        programs: &[
            "mongosh",
            "mongo",
            "mongodump",
            "mongorestore",
            "mongoexport",
            "mongoimport",
            "twine",
            "psexec",
            "PsExec",
            "psexec.exe",
            "PsExec.exe",
        ],
        with: None,
        taken: Taken::Apart,
    },
    ProgramOption {
        names: &["P"],
        programs: &[
            "zip",
            "unzip",
            "sqlcmd",
            "bcp",
            "ipmitool",
            "mosquitto_pub",
            "mosquitto_sub",
            "ssh-keygen",
        ],
        with: None,
        taken: Taken::Apart,
    },
    ProgramOption {
        names: &["N"],
        programs: &["ssh-keygen"],
        with: None,
        taken: Taken::Apart,
    },
    ProgramOption {
        names: &["a"],
        programs: &["redis-cli"],
        with: None,
        taken: Taken::Apart,
    },
    ProgramOption {
        names: &["k"],
        programs: &["openssl"],
        with: None,
        taken: Taken::Apart,
    },
    ProgramOption {
        names: &["w"],
        programs: &[
            "ldapsearch",
            "ldapadd",
            "ldapmodify",
            "ldapdelete",
            "ldapwhoami",
            "ldappasswd",
            "ldapcompare",
            "ldapmodrdn",
            "ldapexop",
            "security",
        ],
        with: None,
        taken: Taken::Apart,
    },
    ProgramOption {
        names: &[
            "storepass",
            "keypass",
            "srcstorepass",
            "deststorepass",
            "srckeypass",
            "destkeypass",
        ],
        programs: &["keytool", "jarsigner"],
        with: None,
        taken: Taken::Apart,
    },
    ProgramOption {
        names: &["b", "body"],
        programs: &["gh"],
        with: Some("secret"),
        taken: Taken::Apart,
    },
    // A secret's or a parameter's value given to a cloud's store.
    ProgramOption {
        names: &["value"],
        programs: &["az"],
        with: Some("secret"),
        taken: Taken::Apart,
    },
    ProgramOption {
        names: &["value"],
        programs: &["aws"],
        with: Some("put-parameter"),
        taken: Taken::Apart,
    },
    ProgramOption {
        names: &["secret-string"],
        programs: &["aws"],
        with: None,
        taken: Taken::Apart,
    },
];

/// Programs whose `-u` and `--user` take `UID:GID`, not `USER:PASS`.
const USER_GROUP_PROGRAMS: &[&str] = &["docker", "docker-compose", "podman", "nerdctl", "buildah"];

/// HTTPie's commands (and xh's, which takes its options), whose `-a` is `USER:PASS`.
const HTTPIE: &[&str] = &["http", "https", "xh", "xhs"];

/// The value a command line's option at `dash` (a `-` after a blank, or the text's start)
/// gives a credential, to mask whole:
///
/// - an option whose name names a credential ([`named_option_value`]): `--password VALUE`,
///   `--token 'VALUE'`, `--api-key V`, `-token V`: the word after it (to a blank, a quote or
///   a `;`) or the quoted value after it;
/// - an option a program reads a password by ([`PROGRAM_OPTIONS`]), its program a word of
///   its command; a MySQL or MariaDB client's `-pPASS` (glued to its `-p`, on a line that
///   names `mysql` or `mariadb`; `-p PASS` is no password to them, who then ask for it);
/// - the value fish's `set -x NAME V` gives a variable named as a credential ([`fish_set`]);
/// - curl's `-u USER:PASS` and `--user USER:PASS` (what follows the `:`; not a word with a
///   `/`, as in `git push -u https://…` or `-u origin HEAD:refs/x`, nor a container's
///   `docker run -u 1000:1000`), Samba's `-U USER%PASS` (what follows the `%`), HTTPie's
///   `-a USER:PASS` and lftp's `-u USER,PASS`;
/// - OpenSSL's `-pass pass:V`, `-passin pass:V`, `-passout pass:V` (what follows `pass:`);
/// - PowerShell's `ConvertTo-SecureString 'V' -AsPlainText` ([`secure_string`]);
/// - `htpasswd -b FILE USER PASS` (`-nb USER PASS`), by its place after the options;
/// - what `echo` or `printf` pipes to a program that reads a password on its standard input,
///   or what a here-string gives it ([`here_string`]): `sudo -S` (`--stdin`), `passwd
///   --stdin`, any `--password-stdin` (`docker login`, `helm registry login`), `gh auth
///   login --with-token`, `gpg --passphrase-fd 0`.
///
/// `--name=value` is [`super::find::keyed_at_sign`]'s. Not a value: another option (`-…`), a
/// reference (`$TOKEN`, `<token>`), the option's own name (`--password PASSWORD`, a usage
/// line), a word of prose ([`PROSE_WORDS`]), an option whose name starts with `no-`.
pub fn keyed_at_option(text: &str, dash: usize) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let n0 = dash + 1 + usize::from(b.get(dash + 1) == Some(&b'-'));
    if !b.get(n0).is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let mut ne = n0;
    while b.get(ne).is_some_and(|&c| is_name_byte(c)) {
        ne += 1;
    }
    let name = &b[n0..ne];
    let value_end = |at: usize| option_value_end(b, at);
    let command = Command::new(b, dash);
    let short = n0 == dash + 1;
    let apart = matches!(b.get(ne), Some(b' ' | b'\t'));
    if short && apart && name.contains(&b'b') {
        if let Some(after) = command.find("htpasswd") {
            return htpasswd_password(b, after, command_end(b, dash));
        }
    }
    if name.eq_ignore_ascii_case(b"AsPlainText") {
        return secure_string(b, &command);
    }
    if matches!(
        (short, name),
        (true, b"S")
            | (
                false,
                b"stdin" | b"password-stdin" | b"with-token" | b"passphrase-fd"
            )
    ) {
        let reads = match name {
            b"S" => command.names("sudo"),
            b"stdin" => command.names("sudo") || command.names("passwd"),
            // gpg's passphrase read from its standard input.
            b"passphrase-fd" => b[skip_blanks(b, ne)..].starts_with(b"0"),
            _ => true,
        };
        if !reads {
            return None;
        }
        return piped_value(b, command.start()).or_else(|| here_string(b, dash));
    }
    if short && apart && name.iter().all(|c| b"gUxlu".contains(c)) {
        if let Some(value) = fish_set(b, &command, ne) {
            return Some(value);
        }
    }
    let v = skip_blanks(b, ne);
    if apart && program_reads(&command, name, Taken::Apart) {
        return word_value(b, (v, value_end(v)));
    }
    if !short && b.get(ne) == Some(&b'=') && program_reads(&command, name, Taken::Apart) {
        // `--body=V`: a name that names a credential is `keyed_at_sign`'s.
        return word_value(b, (ne + 1, value_end(ne + 1)));
    }
    if short && (ne > n0 + 1 || quote_at(b, ne).is_some()) {
        // Else the name is one of several letters (`-storepass`, `-token`, as Go's flags are
        // written).
        if let Some(value) = glued_value(b, &command, n0) {
            return Some(value);
        }
    }
    if !apart {
        return None;
    }
    if short && (name == b"a" && command.names_any(HTTPIE) || name == b"u" && command.names("lftp"))
    {
        // HTTPie's `-a USER:PASS`, lftp's `-u USER,PASS`.
        let sep = if name == b"a" { b':' } else { b',' };
        return after_byte(b, value_at(b, v, value_end(v)), sep);
    }
    let long_user = name == b"user" && n0 == dash + 2;
    let curl = name == b"u" && short || long_user;
    let samba = name == b"U" && short || long_user;
    if curl || samba {
        return user_password(b, &command, value_at(b, v, value_end(v)), curl, samba);
    }
    if matches!(name, b"pass" | b"passin" | b"passout") {
        let (vs, ve) = value_at(b, v, value_end(v));
        return b[vs..ve]
            .starts_with(b"pass:")
            .then_some((vs + 5, ve))
            .filter(|(s, e)| s < e);
    }
    named_option_value(b, name, value_at(b, v, value_end(v)))
}

/// The value fish's `set` gives a variable named as a credential (`set -gx API_TOKEN V`), at
/// its last option (its scope or export: `-g`, `-U`, `-x`, `-l`, `-u`), which ends at
/// `after`: the command's first word is `set`, the word after the option the name.
fn fish_set(b: &[u8], command: &Command<'_>, after: usize) -> Option<(usize, usize)> {
    let first = skip_separators(b, command.start());
    if !b[first..command.dash].starts_with(b"set ") {
        return None;
    }
    let mut args = arguments(b, after, command_end(b, after));
    let (ns, ne) = args.next()?;
    if !names_a_credential_in_text(&b[ns..ne]) {
        return None;
    }
    args.next().filter(|&(s, e)| may_be_value(&b[s..e]))
}

/// Where the word of an option's value that starts at `at` ends: white space, a quote, a
/// backtick or a `;`.
fn option_value_end(b: &[u8], at: usize) -> usize {
    let stop = |c: &u8| c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'`' | b';');
    b[at..].iter().position(stop).map_or(b.len(), |i| at + i)
}

/// The value glued to the one-letter option whose letter is at `n0`, when a program reads a
/// password so: `-pPASS` (a MySQL or MariaDB client on the option's line, [`PROGRAM_OPTIONS`]
/// given glued), `-U'ana%PASS'` (Samba's, what follows the `%`).
fn glued_value(b: &[u8], command: &Command<'_>, n0: usize) -> Option<(usize, usize)> {
    let glued = || value_at(b, n0 + 1, option_value_end(b, n0 + 1));
    let in_line = |w: &[u8]| {
        let dash = command.dash;
        let line = line_start(b, dash);
        memchr::memmem::find(&b[line..dash], w).is_some()
    };
    match b[n0] {
        b'U' => after_byte(b, glued(), b'%'),
        b'p' if in_line(b"mysql") || in_line(b"mariadb") => Some(glued()),
        letter => program_reads(command, &[letter], Taken::Glued).then(glued),
    }
}

/// The password in the value of curl's `-u` (`USER:PASS`) or Samba's `-U` (`USER%PASS`),
/// both `--user`: not a URL or a ref (`git push -u https://…`, `-u origin HEAD:refs/x`), nor
/// a container's user and group (`docker run -u 1000:1000`).
fn user_password(
    b: &[u8],
    command: &Command<'_>,
    value: (usize, usize),
    curl: bool,
    samba: bool,
) -> Option<(usize, usize)> {
    if let Some(pass) = after_byte(b, value, b'%').filter(|_| samba) {
        return Some(pass);
    }
    let (vs, ve) = value;
    if !curl || memchr::memchr(b'/', &b[vs..ve]).is_some() || command.names_any(USER_GROUP_PROGRAMS)
    {
        return None;
    }
    after_byte(b, value, b':')
}

/// The value `vs..ve` after an option named `name`, when the name names a credential
/// (`--password V`, `-token V`) and the value is no option, reference, prose word or the
/// name again.
fn named_option_value(b: &[u8], name: &[u8], (vs, ve): (usize, usize)) -> Option<(usize, usize)> {
    if name.len() >= 3 && name[..3].eq_ignore_ascii_case(b"no-")
        || !names_a_credential_in_text(name)
    {
        return None;
    }
    let value = &b[vs..ve];
    if value.first() == Some(&b'-') || is_reference(value) {
        return None;
    }
    let sign = value
        .iter()
        .rposition(u8::is_ascii_alphanumeric)
        .map_or(0, |i| i + 1);
    let bare = &value[..sign];
    let prose = PROSE_WORDS
        .iter()
        .any(|w| bare.eq_ignore_ascii_case(w.as_bytes()));
    (!prose && !same_name(value, name)).then_some((vs, ve))
}

/// The plain text PowerShell's `ConvertTo-SecureString` makes a secure string of, before its
/// `-AsPlainText` (the end of `command`): its first argument that is no option, or the one
/// after `-String` (`ConvertTo-SecureString 'V' -AsPlainText -Force`).
fn secure_string(b: &[u8], command: &Command<'_>) -> Option<(usize, usize)> {
    let after = command.find("ConvertTo-SecureString")?;
    let mut args = arguments(b, after, command.dash);
    while let Some((s, e)) = args.next() {
        let arg = &b[s..e];
        if arg.eq_ignore_ascii_case(b"-String") {
            return args.next().filter(|&(s, e)| may_be_value(&b[s..e]));
        }
        if arg.first() != Some(&b'-') {
            return may_be_value(arg).then_some((s, e));
        }
    }
    None
}

/// Whether the option named `name` is one a program of `command` reads a password by
/// ([`PROGRAM_OPTIONS`]), its value taken as `taken` says.
fn program_reads(command: &Command<'_>, name: &[u8], taken: Taken) -> bool {
    PROGRAM_OPTIONS.iter().any(|o| {
        (o.taken == taken || o.taken == Taken::Both)
            && o.names.iter().any(|n| n.as_bytes() == name)
            && command.names_any(o.programs)
            && o.with.is_none_or(|w| command.names(w))
    })
}

/// What follows the first `sep` in the value `vs..ve` (`USER:PASS`, `USER%PASS`), when it
/// is a value that may be a credential.
fn after_byte(b: &[u8], (vs, ve): (usize, usize), sep: u8) -> Option<(usize, usize)> {
    let at = vs + memchr::memchr(sep, &b[vs..ve])? + 1;
    (at < ve && !is_reference(&b[at..ve])).then_some((at, ve))
}

/// The password `htpasswd -b` takes by its place, its arguments in `b[from..to]`: its third
/// argument that is no option (`-b FILE USER PASS`), or second with `-n` (`-nb USER PASS`,
/// which writes to standard output). `-C COST` takes a value of its own.
fn htpasswd_password(b: &[u8], from: usize, to: usize) -> Option<(usize, usize)> {
    let mut args = arguments(b, from, to);
    let (mut no_file, mut placed) = (false, Vec::new());
    while let Some((s, e)) = args.next() {
        match &b[s..e] {
            b"-C" => {
                args.next();
            }
            [b'-', flags @ ..] => no_file |= flags.contains(&b'n'),
            _ => placed.push((s, e)),
        }
    }
    let (vs, ve) = *placed.get(if no_file { 1 } else { 2 })?;
    may_be_value(&b[vs..ve]).then_some((vs, ve))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name in capitals that [`names_a_credential_in_text`] takes ends with one of
    /// [`CREDENTIAL_ENDS`]: names of one and two words (apart and glued) from the words the
    /// rules name.
    #[test]
    fn credential_ends_cover_every_name_in_capitals() {
        let words = [
            "PASSWORD",
            "PASSWORDS",
            "PASSWD",
            "PASS",
            "PGPASS",
            "PWD",
            "PW",
            "PASSPHRASE",
            "SECRET",
            "SECRETS",
            "TOKEN",
            "AUTH",
            "AUTHORIZATION",
            "CREDENTIAL",
            "CREDENTIALS",
            "COOKIE",
            "COOKIES",
            "BEARER",
            "APIKEY",
            "ACCESSKEY",
            "PRIVATEKEY",
            "KEY",
            "BASE",
            "API",
            "ACCESS",
            "PRIVATE",
            "SESSION",
            "ENCRYPTION",
            "SIGNING",
            "MASTER",
            "CLIENT",
            "ID",
            "URL",
            "DB",
            "GITHUB",
        ];
        let mut named = 0;
        for first in words.iter().chain([&""]) {
            for last in words {
                for glue in ["_", ""] {
                    let name = format!("{first}{}{last}", if first.is_empty() { "" } else { glue });
                    if names_a_credential_in_text(name.as_bytes()) {
                        named += 1;
                        // As [`after_capitals`] reads it: after a blank.
                        for blank in [" ", "\t"] {
                            let b = format!("{blank}{name}").into_bytes();
                            let end = [b[b.len() - 3], b[b.len() - 2], b[b.len() - 1]];
                            assert!(CREDENTIAL_ENDS.contains(&end), "{name}");
                        }
                    }
                }
            }
        }
        assert!(named > 300, "{named}");
    }
}
