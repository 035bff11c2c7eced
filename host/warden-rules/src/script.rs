//! Splitting a shell script into its simple commands with bash's grammar
//! (tree-sitter-bash). Plain commands joined by `&&`, `||`, `;`, `|` and `&`
//! are split and each is judged; whatever else a script holds is noted as
//! unparsed, and the commands found inside it are judged too.

use std::cell::RefCell;

use tree_sitter::{Node, Parser};

use crate::command::Token;
use crate::split::{RawCommand, Split};

/// Scripts longer than this are not read at all.
pub const MAX_SCRIPT_BYTES: usize = 64 * 1024;

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new({
        let mut parser = Parser::new();
        parser.set_language(&tree_sitter_bash::LANGUAGE.into()).expect("the bash grammar matches tree-sitter");
        parser
    });
}

/// Adds the commands of `script` to `split`, each seen through by `split`.
pub fn split_script(script: &str, depth: usize, split: &mut Split) {
    if script.len() > MAX_SCRIPT_BYTES {
        return split.unparsed(format!("the script is longer than {MAX_SCRIPT_BYTES} bytes"));
    }
    if script.contains('\0') {
        return split.unparsed("the script holds a NUL byte".into());
    }
    // Bash joins `g\<newline>it` into one word before it reads the script; the grammar sees two.
    let bytes = script.as_bytes();
    let joins = (1..bytes.len().saturating_sub(1)).any(|i| {
        bytes[i] == b'\\' && bytes[i + 1] == b'\n' && !bytes[i - 1].is_ascii_whitespace() && bytes.get(i + 2).is_some_and(|b| !b.is_ascii_whitespace())
    });
    if joins {
        split.unparsed("a line break inside a word (backslash-newline), which bash joins".into());
    }
    let Some(tree) = PARSER.with(|p| p.borrow_mut().parse(script, None)) else {
        return split.unparsed("the script could not be parsed".into());
    };
    let root = tree.root_node();
    if root.has_error() {
        split.unparsed("the script is not valid shell syntax".into());
    }
    Walker { src: script.as_bytes(), depth, split }.statement(root);
}

struct Walker<'a, 's> {
    src: &'a [u8],
    depth: usize,
    split: &'s mut Split,
}

impl Walker<'_, '_> {
    fn text(&self, node: Node) -> &str {
        node.utf8_text(self.src).unwrap_or("")
    }

    fn statement(&mut self, node: Node) {
        match node.kind() {
            "program" | "list" | "pipeline" | "negated_command" => {
                // Bash refuses `;;` outside a case statement; tree-sitter lets it pass.
                if (0..node.child_count()).filter_map(|i| node.child(i)).any(|c| c.kind() == ";;") {
                    self.split.unparsed("text that is not valid shell syntax: ;;".into());
                }
                self.children(node);
            }
            "comment" | "&&" | "||" | ";" | "|" | "|&" | "&" | "!" | ";;" => {}
            "command" => self.command(node),
            "redirected_statement" => {
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    match child.kind() {
                        "file_redirect" | "heredoc_redirect" | "herestring_redirect" => self.redirect(child),
                        _ => self.statement(child),
                    }
                }
            }
            "variable_assignment" | "variable_assignments" => {
                self.substitutions(node);
                self.note_assignments(node);
            }
            "declaration_command" => {
                self.note_assignments(node);
                self.declaration(node);
            }
            "command_substitution" | "process_substitution" => {
                let what = if node.kind() == "command_substitution" { "a command substitution" } else { "a process substitution" };
                self.split.unparsed(format!("{what}: {}", self.text(node)));
                self.children(node);
            }
            kind => {
                let what = match kind {
                    "subshell" => "a subshell",
                    "compound_statement" => "a command group",
                    "if_statement" | "elif_clause" | "else_clause" => "an if statement",
                    "for_statement" | "c_style_for_statement" => "a for loop",
                    "while_statement" => "a while loop",
                    "case_statement" | "case_item" => "a case statement",
                    "function_definition" => "a function definition",
                    "test_command" => "a test",
                    "ERROR" => "text that is not valid shell syntax",
                    _ => "a construct other than plain commands",
                };
                self.split.unparsed(format!("{what}: {}", first_line(self.text(node))));
                self.children(node);
            }
        }
    }

    fn children(&mut self, node: Node) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.statement(child);
        }
    }

    /// Notes the variables `node` (an assignment, or `export A=1 B`) sets for the rest of the script.
    fn note_assignments(&mut self, node: Node) {
        if node.kind() == "variable_assignment" || node.kind() == "variable_name" {
            let name = node.child_by_field_name("name").unwrap_or(node);
            let name = self.text(name).to_owned();
            return self.split.assigns(&name);
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if matches!(child.kind(), "variable_assignment" | "variable_name") {
                self.note_assignments(child);
            }
        }
    }

    /// Judges the commands inside substitutions at or anywhere below `node`.
    fn substitutions(&mut self, node: Node) {
        // Most words hold none: a look at their text spares walking their nodes.
        let text = &self.src[node.start_byte()..node.end_byte()];
        if !text.windows(2).any(|w| matches!(w, b"$(" | b"<(" | b">(")) && !text.contains(&b'`') {
            return;
        }
        if matches!(node.kind(), "command_substitution" | "process_substitution") {
            return self.statement(node);
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.substitutions(child);
        }
    }

    fn redirect(&mut self, node: Node) {
        self.substitutions(node);
        if node.kind() != "file_redirect" {
            return;
        }
        let Some(target) = node.child_by_field_name("destination").or_else(|| node.named_children(&mut node.walk()).last()) else { return };
        match self.token(target) {
            Token::Word(w) if w.starts_with("/dev/tcp/") || w.starts_with("/dev/udp/") => {
                self.split.unparsed(format!("a redirection to a network socket: {}", self.text(node)));
            }
            Token::Word(_) => {}
            Token::Unknown(_) if target.kind() == "number" => {}
            Token::Unknown(w) => self.split.unparsed(format!("a redirection to a place known only when it runs: {w}")),
        }
    }

    fn command(&mut self, node: Node) {
        let mut raw = RawCommand::default();
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "variable_assignment" => {
                    self.substitutions(child);
                    raw.assignments.push(self.text(child).to_owned());
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => self.redirect(child),
                "comment" => {}
                "command_name" => {
                    self.substitutions(child);
                    let name = child.named_child(0).unwrap_or(child);
                    raw.tokens.push(self.token(name));
                }
                _ => {
                    self.substitutions(child);
                    raw.tokens.push(self.token(child));
                }
            }
        }
        self.split.command(raw, self.depth);
    }

    /// `export A=1 B`, `local x`, `readonly`, `declare`: judged as the command they are.
    fn declaration(&mut self, node: Node) {
        self.substitutions(node);
        let mut raw = RawCommand::default();
        let keyword = node.child(0).map(|k| self.text(k).to_owned()).unwrap_or_default();
        raw.tokens.push(Token::Word(keyword));
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            let text = self.text(child).to_owned();
            raw.tokens.push(match child.kind() {
                "variable_name" | "word" => self.token(child),
                _ => Token::Unknown(text),
            });
        }
        self.split.command(raw, self.depth);
    }

    /// The word `node` stands for, when it can be known before the script runs.
    fn token(&self, node: Node) -> Token {
        let text = self.text(node);
        let unknown = || Token::Unknown(text.to_owned());
        match node.kind() {
            "word" | "variable_name" => unescape_word(text).map_or_else(unknown, Token::Word),
            "number" => Token::Word(text.to_owned()),
            "raw_string" => Token::Word(text.trim_start_matches('\'').trim_end_matches('\'').to_owned()),
            "string" => {
                let mut cursor = node.walk();
                if node.named_children(&mut cursor).any(|part| part.kind() != "string_content") {
                    return unknown();
                }
                // The text between the quotes, whole: the grammar's pieces leave out the line breaks.
                let inner = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(text);
                Token::Word(unescape_double_quoted(inner))
            }
            "concatenation" => {
                let mut word = String::new();
                let mut cursor = node.walk();
                for part in node.named_children(&mut cursor) {
                    if part.kind() == "word" && self.text(part).contains(['{', '}']) {
                        return unknown();
                    }
                    match self.token(part) {
                        Token::Word(w) => word.push_str(&w),
                        Token::Unknown(_) => return unknown(),
                    }
                }
                Token::Word(word)
            }
            _ => unknown(),
        }
    }
}

/// A bare word with its backslashes taken away; `None` when the shell would
/// expand it (a glob, a brace expansion, a leading `~`).
fn unescape_word(text: &str) -> Option<String> {
    if text.starts_with('~') {
        return None;
    }
    let mut word = String::with_capacity(text.len());
    let mut chars = text.chars();
    let mut braces = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => word.push(next),
            },
            '*' | '?' | '[' => return None,
            // An extended glob (`@(a|b)`, `+(x)`), under `shopt -s extglob`.
            '(' if word.ends_with(['@', '+', '!']) => return None,
            '{' => {
                braces = true;
                word.push(c);
            }
            _ => word.push(c),
        }
    }
    if braces && (word.contains(',') || word.contains("..")) {
        return None;
    }
    Some(word)
}

/// The text between double quotes, with the escapes that are escapes there.
fn unescape_double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => out.push(chars.next().expect("peeked")),
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}
