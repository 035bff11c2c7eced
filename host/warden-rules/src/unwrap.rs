//! Seeing through what runs a command: `env` and `VAR=` prefixes, `timeout`,
//! `nice`, `nohup`, `command`, `time`, `exec`, `sudo`, `xargs`, `find -exec`,
//! `busybox`, `bash -c`, `eval`, a program named by a system path, and git's
//! global options.

use crate::command::{assigned, changes_lookup, runs_its_value, Command, Token};
use crate::split::{Layer, Split};

/// Folders whose programs are the ones their names say.
const SYSTEM_FOLDERS: [&str; 6] = ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin", "/usr/local/sbin"];

const SHELLS: [&str; 13] = ["sh", "bash", "rbash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish", "hush", "csh", "tcsh"];

/// Programs that run a command of their own that Warden does not look into:
/// what they run is unparsed.
const OPAQUE_RUNNERS: [&str; 30] = [
    "nsenter", "unshare", "flock", "watch", "script", "su", "runuser", "setpriv", "firejail", "chrt", "taskset", "parallel", "coproc", "fc",
    "linux32", "linux64", "setarch", "prlimit", "choom", "strace", "ltrace", "sg", "newgrp", "pkexec", "gdb", "valgrind", "systemd-run",
    "cpulimit", "torsocks", "proxychains",
];

/// Words that open or close a compound command: in a command's place they
/// are not a program (`! { rm -rf /; }`, which tree-sitter reads as a command named `{`).
const RESERVED: [&str; 21] =
    ["!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "for", "while", "until", "case", "esac", "in", "function", "select", "time", "[[", "]]"];

/// Builtins that set variables from their arguments.
const DECLARATIONS: [&str; 5] = ["export", "declare", "typeset", "local", "readonly"];

/// Builtins that run code given in their arguments, or change how later words are read.
const CODE_BUILTINS: [&str; 8] = ["trap", "compgen", "complete", "mapfile", "readarray", "history", "bind", "let"];

/// Options a wrapper takes before the command it runs.
struct Options {
    /// Single-letter options without a value.
    flags: &'static str,
    /// Single-letter options whose value, if any, is attached (`xargs -i{}`).
    optional: &'static str,
    /// Single-letter options that take one.
    valued: &'static str,
    long_flags: &'static [&'static str],
    long_valued: &'static [&'static str],
    /// `NAME=VALUE` words may come among the options (`env`).
    assignments: bool,
    /// `-10` is an option (`nice`).
    numeric: bool,
    /// Words after the options before the command (`timeout`'s duration).
    positionals: usize,
}

const NONE: Options = Options { flags: "", optional: "", valued: "", long_flags: &[], long_valued: &[], assignments: false, numeric: false, positionals: 0 };

fn wrapper_options(program: &str) -> Option<Options> {
    Some(match program {
        "env" => Options {
            flags: "i0v",
            valued: "uC",
            long_flags: &["ignore-environment", "null", "debug"],
            long_valued: &["unset", "chdir"],
            assignments: true,
            ..NONE
        },
        "timeout" => Options { flags: "v", valued: "sk", long_flags: &["preserve-status", "foreground", "verbose"], long_valued: &["signal", "kill-after"], positionals: 1, ..NONE },
        "nice" => Options { valued: "n", long_valued: &["adjustment"], numeric: true, ..NONE },
        "nohup" | "busybox" => NONE,
        "command" => Options { flags: "pvV", ..NONE },
        "time" => Options { flags: "pvaq", valued: "fo", long_flags: &["portability", "verbose", "append", "quiet"], long_valued: &["format", "output"], ..NONE },
        "exec" => Options { flags: "cl", ..NONE },
        "sudo" => Options {
            assignments: true,
            flags: "AbEHnPSkKlV",
            valued: "CDghpRrtTuU",
            long_flags: &["askpass", "background", "preserve-env", "set-home", "non-interactive", "preserve-groups", "stdin", "reset-timestamp", "remove-timestamp"],
            long_valued: &["close-from", "chdir", "group", "host", "prompt", "chroot", "role", "type", "command-timeout", "user", "other-user"],
            ..NONE
        },
        "doas" => Options { flags: "nL", valued: "uC", ..NONE },
        "xargs" => Options {
            flags: "0ortpx",
            optional: "iel",
            valued: "adEILnPs",
            long_flags: &["null", "no-run-if-empty", "open-tty", "verbose", "interactive", "exit", "show-limits", "eof", "replace", "max-lines"],
            long_valued: &["arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"],
            ..NONE
        },
        "builtin" => NONE,
        "stdbuf" => Options { valued: "ioe", long_valued: &["input", "output", "error"], ..NONE },
        "setsid" => Options { flags: "cfw", long_flags: &["ctty", "fork", "wait"], ..NONE },
        "ionice" => Options { flags: "t", valued: "cnpPu", long_flags: &["ignore"], long_valued: &["class", "classdata", "pid", "pgid", "uid"], ..NONE },
        "chroot" => Options { long_flags: &["skip-chdir"], long_valued: &["userspec", "groups"], positionals: 1, ..NONE },
        _ => return None,
    })
}

/// Where the command a wrapper runs starts: `None` when it runs none.
fn skip_options(tokens: &[Token], options: &Options) -> Result<Option<usize>, String> {
    let mut i = 1;
    while i < tokens.len() {
        let Token::Word(word) = &tokens[i] else {
            return Err(format!("an option known only when it runs: {}", tokens[i].shown()));
        };
        if word == "--" {
            i += 1;
            break;
        }
        // `env -` is `env -i`.
        if word == "-" && options.assignments {
            i += 1;
            continue;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, has_value) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            if options.long_flags.contains(&name) {
                i += 1;
            } else if options.long_valued.contains(&name) {
                i += if has_value { 1 } else { 2 };
            } else {
                return Err(format!("an option Warden does not know: {word}"));
            }
            continue;
        }
        if let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty()) {
            if options.numeric && cluster.chars().all(|c| c.is_ascii_digit()) {
                i += 1;
                continue;
            }
            let mut consumed = 1;
            for (at, letter) in cluster.char_indices() {
                if options.flags.contains(letter) {
                    continue;
                }
                if options.optional.contains(letter) {
                    break;
                }
                if options.valued.contains(letter) {
                    if at + letter.len_utf8() == cluster.len() {
                        consumed = 2;
                    }
                    break;
                }
                return Err(format!("an option Warden does not know: {word}"));
            }
            i += consumed;
            continue;
        }
        // GNU env takes any `NAME=VALUE` with a name (`A-B=1`, `BASH_FUNC_f%%=...`); so does sudo.
        if options.assignments && word.find('=').is_some_and(|at| at > 0) {
            i += 1;
            continue;
        }
        break;
    }
    for _ in 0..options.positionals {
        match tokens.get(i) {
            Some(Token::Word(_)) => i += 1,
            Some(unknown) => return Err(format!("an argument known only when it runs: {}", unknown.shown())),
            None => return Ok(None),
        }
    }
    Ok((i < tokens.len()).then_some(i))
}

/// Adds `command` to `split` as the rules should see it, with every layer
/// it was wrapped in.
pub fn see_through(mut command: Command, depth: usize, split: &mut Split) {
    loop {
        let Some(Token::Word(program)) = command.tokens.first().cloned() else {
            split.unparsed(format!("the program is known only when it runs: {}", command.shown()));
            return split.push(command, Layer::Command);
        };
        if RESERVED.contains(&program.as_str()) && !(program == "time" && command.tokens.len() > 1 && !is_reserved(&command.tokens[1])) {
            split.unparsed(format!("a reserved word where a command's name goes: {}", command.shown()));
            return split.push(command, Layer::Command);
        }
        let mut name = name_program(&mut command, &program);
        // `git-push` (git's exec-path form) is `git push`.
        if let Some(sub) = name.strip_prefix("git-").filter(|s| !s.is_empty()).map(str::to_owned) {
            command.tokens.splice(0..1, [Token::Word("git".into()), Token::Word(sub)]);
            command.program_uncertain = true;
            name = "git".into();
        }
        if let Some(options) = wrapper_options(&name) {
            match skip_options(&command.tokens, &options) {
                Err(reason) => {
                    split.unparsed(format!("{name}: {reason}"));
                    return split.push(command, Layer::Command);
                }
                Ok(None) => return split.push(command, Layer::Command),
                Ok(Some(start)) => {
                    let mut inner = command.tokens[start..].to_vec();
                    if name == "env" || name == "sudo" {
                        let set = command.tokens[1..start].iter().filter_map(Token::word).filter_map(|w| w.split_once('=').map(|(n, _)| n));
                        for variable in set {
                            command.lookup_changed |= changes_lookup(variable) || assigned(&format!("{variable}=")).is_none();
                            if runs_its_value(variable) {
                                split.unparsed(format!("{variable} is set, whose value bash runs or reads commands from"));
                            }
                        }
                    }
                    command.lookup_changed |= name == "chroot";
                    if name == "xargs" {
                        inner = xargs_command(&command.tokens[1..start], inner);
                    }
                    split.push(command.clone(), Layer::Wrapper);
                    command.elevated |= name == "sudo" || name == "doas";
                    // A wrapper that may not be the one its name says (`./env`) may run anything.
                    command.lookup_changed |= command.program_uncertain;
                    let wrapper = shown(&command.tokens[..start]);
                    command.seen_through.push(wrapper);
                    command.tokens = inner;
                    command.program_uncertain = false;
                    continue;
                }
            }
        }
        match name.as_str() {
            "git" => {
                match git_globals(&command.tokens) {
                    Ok(Some(rest)) => {
                        command.seen_through.push(format!("git {}", shown(&command.tokens[1..rest])));
                        command.tokens.drain(1..rest);
                    }
                    Ok(None) => {}
                    Err(reason) => split.unparsed(format!("git: {reason}")),
                }
                return split.push(command, Layer::Command);
            }
            "eval" => {
                let skip = 1 + usize::from(command.tokens.get(1).and_then(Token::word) == Some("--"));
                let words: Option<Vec<&str>> = command.tokens[skip..].iter().map(Token::word).collect();
                let Some(words) = words else {
                    split.unparsed(format!("eval of words known only when it runs: {}", command.shown()));
                    return split.push(command, Layer::Command);
                };
                let script = words.join(" ");
                split.push(command.clone(), Layer::Wrapper);
                return split.nested_script(&script, &command, depth, true);
            }
            "find" => {
                if let Some(unknown) = command.tokens.iter().find(|t| matches!(t, Token::Unknown(_))) {
                    // It may be `-exec` with a command of its own.
                    split.unparsed(format!("find with a word known only when it runs: {}", unknown.shown()));
                }
                let inner = find_commands(&command.tokens);
                split.push(command.clone(), Layer::Command);
                for tokens in inner {
                    let mut run = command.clone();
                    run.seen_through.push("find -exec".to_owned());
                    run.tokens = tokens;
                    run.program_uncertain = false;
                    see_through(run, depth, split);
                }
                return;
            }
            shell if SHELLS.contains(&shell) => return shell_command(command, depth, split),
            "source" | "." => split.unparsed(format!("{name} runs a script Warden cannot read, in the shell itself: {}", command.shown())),
            "alias" | "unalias" | "hash" | "enable" => split.unparsed(format!("{name} changes what a command name runs: {}", command.shown())),
            "shopt" => split.unparsed(format!("shopt changes how the shell reads the words that follow: {}", command.shown())),
            "exec" if command.tokens.iter().skip(1).take_while(|t| t.word().is_some_and(|w| w.starts_with('-'))).any(|t| t.word().is_some_and(|w| w.contains('a'))) => {
                split.unparsed(format!("exec -a runs the program under another name: {}", command.shown()));
            }
            "set" if sets_risky_option(&command.tokens[1..]) => {
                split.unparsed(format!("set turns on history expansion, keywords anywhere or traps in functions: {}", command.shown()));
            }
            declaration if DECLARATIONS.contains(&declaration) && declares_evaluated(&command.tokens[1..]) => {
                split.unparsed(format!("{name} with attributes or subscripts bash evaluates: {}", command.shown()));
            }
            declaration if DECLARATIONS.contains(&declaration) => {
                // Reached through `command` or `builtin` too: what it sets holds for the rest of the script.
                for variable in command.tokens[1..].iter().filter_map(Token::word).filter_map(|w| w.split_once('=').map(|(n, _)| n.to_owned())) {
                    split.assigns(&variable);
                }
            }
            "printf" if command.tokens[1..].iter().any(|t| t.word().is_none_or(|w| w.starts_with("-v"))) => {
                split.unparsed(format!("printf -v names a variable, which bash may evaluate: {}", command.shown()));
            }
            "read" | "test" | "[" | "unset" | "getopts" if command.tokens[1..].iter().any(|t| t.word().is_none_or(|w| w.contains('[') || w == "-v" || w == "-a" || changes_lookup(w) || runs_its_value(w))) => {
                split.unparsed(format!("{name} with a variable bash may evaluate or that changes what runs: {}", command.shown()));
            }
            runner if OPAQUE_RUNNERS.contains(&runner) => {
                split.unparsed(format!("{name} runs a command Warden does not look into: {}", command.shown()));
            }
            builtin if CODE_BUILTINS.contains(&builtin) => {
                split.unparsed(format!("{name} runs code given in its words, or evaluates them: {}", command.shown()));
            }
            _ => {}
        }
        if let Some(reason) = interpreter_reason(&name, &command.tokens) {
            split.unparsed(reason);
        }
        return split.push(command, Layer::Command);
    }
}

/// The program's name as the rules know it: `/usr/bin/git` is `git`; a
/// program named by another path (`./git`) keeps its name but may be anything.
fn name_program(command: &mut Command, program: &str) -> String {
    command.program_uncertain |= command.lookup_changed;
    let Some((folder, name)) = program.rsplit_once('/') else { return program.to_owned() };
    let folder = if folder.is_empty() { "/" } else { folder };
    if SYSTEM_FOLDERS.contains(&folder) && !name.is_empty() {
        command.seen_through.push(program.to_owned());
    } else {
        command.program_uncertain = true;
    }
    command.tokens[0] = Token::Word(name.to_owned());
    name.to_owned()
}

fn shown(tokens: &[Token]) -> String {
    Command { tokens: tokens.to_vec(), program_uncertain: false, lookup_changed: false, elevated: false, seen_through: Vec::new() }.shown()
}

/// The command `xargs` runs: its words, then the words it reads.
fn xargs_command(options: &[Token], mut inner: Vec<Token>) -> Vec<Token> {
    let replace = xargs_replace(options);
    match replace {
        Some(mark) => {
            for token in &mut inner {
                if token.word().is_some_and(|w| w.contains(&mark)) {
                    *token = Token::Unknown(token.shown().to_owned());
                }
            }
        }
        None => inner.push(Token::Unknown("(words read by xargs)".into())),
    }
    inner
}

/// The replace string of `-I R`, `-IR`, `-rI R` (in a cluster), `-i[R]` or
/// `--replace[=R]` (`{}` by default for the last two).
fn xargs_replace(options: &[Token]) -> Option<String> {
    let mut words = options.iter().filter_map(Token::word);
    while let Some(word) = words.next() {
        if let Some(value) = word.strip_prefix("--replace") {
            return Some(value.strip_prefix('=').filter(|v| !v.is_empty()).unwrap_or("{}").to_owned());
        }
        let Some(cluster) = word.strip_prefix('-').filter(|c| !c.starts_with('-')) else { continue };
        for (at, letter) in cluster.char_indices() {
            let rest = &cluster[at + 1..];
            match letter {
                'I' if rest.is_empty() => return words.next().map(str::to_owned),
                'I' => return Some(rest.to_owned()),
                'i' => return Some(if rest.is_empty() { "{}".to_owned() } else { rest.to_owned() }),
                // A letter that takes the rest of the word, or the next one, as its value.
                l if "adELnPsel".contains(l) => break,
                _ => {}
            }
        }
    }
    None
}

/// The commands of `find`'s `-exec`, `-execdir`, `-ok` and `-okdir`, with `{}` unknown.
fn find_commands(tokens: &[Token]) -> Vec<Vec<Token>> {
    let mut commands = Vec::new();
    let mut i = 1;
    while i < tokens.len() {
        let starts = tokens[i].word().is_some_and(|w| matches!(w, "-exec" | "-execdir" | "-ok" | "-okdir"));
        i += 1;
        if !starts {
            continue;
        }
        let mut run = Vec::new();
        while i < tokens.len() && !tokens[i].word().is_some_and(|w| w == ";" || w == "+") {
            run.push(match &tokens[i] {
                Token::Word(w) if w.contains("{}") => Token::Unknown(w.clone()),
                other => other.clone(),
            });
            i += 1;
        }
        if !run.is_empty() {
            commands.push(run);
        }
    }
    commands
}

/// Where git's subcommand starts after its global options; `None` when there are none.
fn git_globals(tokens: &[Token]) -> Result<Option<usize>, String> {
    const FLAGS: [&str; 14] = [
        "-P", "-p", "--paginate", "--no-pager", "--bare", "--no-replace-objects", "--literal-pathspecs",
        "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--no-advice",
        "--no-lazy-fetch", "--exec-path",
    ];
    // Settings that run nothing; any other (`core.fsmonitor`, `core.pager`, `diff.external`,
    // `core.hooksPath`, `include.path`, `help.autocorrect`, `alias.*`...) may run a command or another subcommand.
    const HARMLESS: [&str; 13] = [
        "user.name", "user.email", "color.", "core.quotepath", "advice.", "init.defaultbranch", "commit.gpgsign",
        "tag.gpgsign", "log.", "format.pretty", "pull.rebase", "push.default", "safe.directory",
    ];
    const VALUED: [&str; 7] = ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"];
    let mut i = 1;
    while let Some(token) = tokens.get(i) {
        let Token::Word(word) = token else {
            return Err(format!("a global option known only when it runs: {}", token.shown()));
        };
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (word.as_str(), None),
        };
        if name == "--exec-path" && inline.is_some() {
            return Err(format!("{word} runs git's commands from another folder"));
        }
        if FLAGS.contains(&name) {
            i += 1;
        } else if VALUED.contains(&name) {
            let value = match inline {
                Some(v) => Some(v.to_owned()),
                None => tokens.get(i + 1).and_then(|t| t.word()).map(str::to_owned),
            };
            let Some(value) = value else {
                return Err(format!("the value of {name} is known only when it runs"));
            };
            let key = value.split('=').next().unwrap_or_default().to_ascii_lowercase();
            if key.starts_with("alias.") && matches!(name, "-c" | "--config-env") {
                return Err(format!("{name} {value} defines a command of its own"));
            }
            let harmless = HARMLESS.iter().any(|h| if h.ends_with('.') { key.starts_with(h) } else { key == *h });
            if matches!(name, "-c" | "--config-env") && !harmless {
                return Err(format!("{name} {value} is a setting that may run a command or another subcommand"));
            }
            i += if inline.is_some() { 1 } else { 2 };
        } else if word.starts_with('-') {
            return Err(format!("a global option Warden does not know: {word}"));
        } else {
            break;
        }
    }
    Ok((i > 1).then_some(i))
}

/// `bash -c SCRIPT` is judged by the script; a shell reading its commands
/// from standard input cannot be judged at all.
fn shell_command(command: Command, depth: usize, split: &mut Split) {
    let name = command.tokens[0].shown().to_owned();
    let mut inline = false;
    let mut i = 1;
    while let Some(token) = command.tokens.get(i) {
        let Token::Word(word) = token else {
            split.unparsed(format!("{name}: an option known only when it runs: {}", token.shown()));
            return split.push(command, Layer::Command);
        };
        match word.as_str() {
            "--" => {
                i += 1;
                break;
            }
            "-o" | "+o" if command.tokens.get(i + 1).and_then(Token::word).is_none_or(|o| matches!(o, "history" | "histexpand" | "keyword" | "functrace")) => {
                split.unparsed(format!("{name} {word}: assignments anywhere, history expansion or traps in functions"));
                return split.push(command, Layer::Command);
            }
            "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file" => i += 2,
            w if w.starts_with("--") => i += 1,
            "-C" | "--init-command" if name == "fish" => {
                split.unparsed(format!("fish {word} runs a command of its own"));
                return split.push(command, Layer::Command);
            }
            w if (w.starts_with('-') || w.starts_with('+')) && w.len() > 1 => {
                inline |= w.contains('c');
                if w.contains('s') || w.contains('i') {
                    split.unparsed(format!("{name} reads its commands from standard input"));
                    return split.push(command, Layer::Command);
                }
                if w.contains(['k', 'H', 'T']) {
                    split.unparsed(format!("{name} {w}: assignments anywhere, history expansion or traps in functions"));
                    return split.push(command, Layer::Command);
                }
                // `-co posix`: each `o` or `O` in the cluster takes the next word.
                i += 1 + w.chars().filter(|c| matches!(c, 'o' | 'O')).count();
            }
            _ => break,
        }
    }
    match (inline, command.tokens.get(i)) {
        (true, Some(Token::Word(script))) => {
            let script = script.clone();
            split.push(command.clone(), Layer::Wrapper);
            split.nested_script(&script, &command, depth, false);
        }
        (true, Some(unknown)) => {
            split.unparsed(format!("{name} -c runs a script known only when it runs: {}", unknown.shown()));
            split.push(command, Layer::Command);
        }
        (true, None) => {
            split.unparsed(format!("{name} -c without a script"));
            split.push(command, Layer::Command);
        }
        (false, None) if !command.tokens[1..].iter().any(|t| t.word().is_some_and(|w| w == "--version" || w == "--help")) => {
            split.unparsed(format!("{name} reads its commands from standard input"));
            split.push(command, Layer::Command);
        }
        // Standard input by name is standard input.
        (false, Some(Token::Word(file))) if is_stdin(file) => {
            split.unparsed(format!("{name} reads its commands from standard input"));
            split.push(command, Layer::Command);
        }
        // A script file: judged as the command it is.
        _ => split.push(command, Layer::Command),
    }
}

/// `-`, or a path to standard input or another descriptor (`/dev/stdin`, `//dev/fd/3`, `/proc/self/fd/0`).
fn is_stdin(file: &str) -> bool {
    let path: String = file.split('/').filter(|part| !part.is_empty() && *part != ".").collect::<Vec<_>>().join("/");
    file == "-" || path == "dev/stdin" || path.starts_with("dev/fd/") || (path.starts_with("proc/") && path.contains("/fd/"))
}

/// How an interpreter reads its options: letters that take code (`-c`),
/// letters that take a value, letters that take none, and long options that
/// take none. Any other option is one Warden does not know.
struct Interpreter {
    code: &'static str,
    valued: &'static str,
    flags: &'static str,
    long: &'static [&'static str],
}

fn interpreter(name: &str) -> Option<Interpreter> {
    Some(match name {
        n if n.starts_with("python") || n.starts_with("pypy") => Interpreter { code: "c", valued: "WX", flags: "bBdEIOqsSuvxRP", long: &[] },
        n if n.starts_with("node") || n == "bun" => Interpreter {
            code: "ep",
            valued: "",
            flags: "",
            long: &["--no-warnings", "--enable-source-maps", "--trace-warnings", "--test", "--experimental-vm-modules", "--no-deprecation"],
        },
        n if n.starts_with("perl") => Interpreter { code: "eEMm", valued: "I", flags: "wWXtTsanplcUu", long: &[] },
        n if n.starts_with("ruby") => Interpreter { code: "e", valued: "IrCEFx", flags: "wWvdsnplac", long: &[] },
        n if n.starts_with("lua") => Interpreter { code: "e", valued: "l", flags: "vEW", long: &[] },
        "Rscript" | "osascript" => Interpreter { code: "e", valued: "", flags: "", long: &[] },
        n if n.starts_with("php") => Interpreter { code: "rRBE", valued: "cdzf", flags: "qnHCe", long: &[] },
        _ => return None,
    })
}

/// Why an interpreter's command cannot be judged by what it runs: code on
/// its command line, an option Warden does not know, or a program read from
/// standard input.
fn interpreter_reason(name: &str, tokens: &[Token]) -> Option<String> {
    if name == "deno" {
        return tokens.get(1).and_then(Token::word).filter(|w| *w == "eval").map(|_| "deno eval runs code Warden cannot read".into());
    }
    let known = interpreter(name)?;
    let query = |w: &str| matches!(w, "-v" | "-V" | "-VV" | "--version" | "-h" | "--help");
    if tokens[1..].iter().any(|t| t.word().is_some_and(query)) {
        return None;
    }
    let mut words = tokens[1..].iter();
    while let Some(token) = words.next() {
        let Some(word) = token.word() else { return Some(format!("{name}: an option known only when it runs: {}", token.shown())) };
        if word == "-m" && name.starts_with("python") {
            // A module, run as the command it is.
            return None;
        }
        if is_stdin(word) {
            return Some(format!("{name} reads its program from standard input"));
        }
        if let Some(long) = word.strip_prefix("--") {
            if !known.long.contains(&word) {
                return Some(format!("{name} --{long}: an option Warden does not know, which may run code"));
            }
            continue;
        }
        let Some(cluster) = word.strip_prefix('-') else {
            // The script: judged as the command it is.
            return None;
        };
        for (at, letter) in cluster.char_indices() {
            if known.code.contains(letter) {
                return Some(format!("{name} {word} runs code Warden cannot read"));
            }
            if known.valued.contains(letter) {
                if at + letter.len_utf8() == cluster.len() {
                    words.next();
                }
                break;
            }
            if !known.flags.contains(letter) {
                return Some(format!("{name} {word}: an option Warden does not know, which may run code"));
            }
        }
    }
    Some(format!("{name} reads its program from standard input"))
}

/// Whether a declaration's words ask bash to evaluate: integer, reference,
/// array or function attributes, or a subscript (`declare 'a[$(cmd)]=1'`).
fn declares_evaluated(words: &[Token]) -> bool {
    words.iter().any(|t| t.word().is_none_or(|w| (w.starts_with('-') && w.contains(['i', 'n', 'a', 'A', 'f'])) || w.contains('[')))
}

fn is_reserved(token: &Token) -> bool {
    token.word().is_some_and(|w| RESERVED.contains(&w) || w.starts_with('-'))
}

/// Whether `set` turns on what lets later words run code: history expansion
/// (`-H`, `-o history`), assignments anywhere (`-k`), `-T`.
fn sets_risky_option(words: &[Token]) -> bool {
    let mut words = words.iter();
    while let Some(token) = words.next() {
        let Some(word) = token.word() else { return true };
        if word == "-o" || word == "+o" {
            if words.next().and_then(Token::word).is_none_or(|o| matches!(o, "history" | "histexpand" | "keyword" | "functrace")) {
                return true;
            }
        } else if word.starts_with('-') && !word.starts_with("--") && word.contains(['H', 'k', 'T']) {
            return true;
        }
    }
    false
}
