//! The tokens of LLVM IR text (`opt -S` output): names, strings, metadata, words, punctuation.
//!
//! The one tokenizer every reading of IR text goes through: instructions are parsed from it, and
//! renaming a value rewrites only its name tokens, never the inside of a string (inline asm such
//! as `"mov.u32 $0, %tid.x;"`) or a comment.

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `%name`, `%7`, `%"a b"`: the text is the name without `%` (quotes kept).
    Local,
    /// `@name`: the text is the name without `@` (quotes kept).
    Global,
    /// `!name`, `!7`, `!"text"`, or a lone `!` (before `{`): the text includes the `!`.
    Meta,
    /// `"…"`, quotes included.
    Str,
    /// Keywords, types, numbers and other constants (`add`, `i32`, `-1`, `0xH3C00`, `#8`, `#dbg_value`).
    Word,
    /// One character of punctuation: `( ) [ ] { } < > , = * :`.
    Punct,
}

/// A token: its kind, its text, and where the text starts in the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token<'a> {
    pub kind: Kind,
    pub text: &'a str,
    pub start: usize,
}

impl Token<'_> {
    /// The byte just past the token in its line (`%`/`@` of a name included in `start`).
    pub fn end(&self) -> usize {
        self.start + self.len_in_source()
    }

    fn len_in_source(&self) -> usize {
        match self.kind {
            Kind::Local | Kind::Global => self.text.len() + 1,
            _ => self.text.len(),
        }
    }

    pub fn is(&self, kind: Kind, text: &str) -> bool {
        self.kind == kind && self.text == text
    }

    pub fn is_word(&self, text: &str) -> bool {
        self.is(Kind::Word, text)
    }

    pub fn is_punct(&self, c: char) -> bool {
        self.kind == Kind::Punct && self.text.starts_with(c)
    }
}

/// Characters of an unquoted name (`[-a-zA-Z$._0-9]`).
pub fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'$' | b'.' | b'_')
}

/// The tokens of `text` up to a `;` comment.
pub fn tokens(text: &str) -> Vec<Token<'_>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b';' => break,
            b'%' | b'@' => {
                let kind = if c == b'%' { Kind::Local } else { Kind::Global };
                let (end, name_start) = name_end(bytes, i + 1);
                if end == i + 1 {
                    out.push(Token { kind: Kind::Punct, text: &text[i..i + 1], start });
                    i += 1;
                } else {
                    out.push(Token { kind, text: &text[name_start..end], start });
                    i = end;
                }
                continue;
            }
            b'!' => {
                let end = if bytes.get(i + 1) == Some(&b'"') {
                    string_end(bytes, i + 1)
                } else {
                    let mut j = i + 1;
                    while j < bytes.len() && (is_name_char(bytes[j]) || bytes[j] == b'\\') {
                        j += 1;
                    }
                    j
                };
                out.push(Token { kind: Kind::Meta, text: &text[i..end], start });
                i = end;
                continue;
            }
            b'"' => {
                let end = string_end(bytes, i);
                out.push(Token { kind: Kind::Str, text: &text[i..end], start });
                i = end;
                continue;
            }
            b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'<' | b'>' | b',' | b'=' | b'*' | b':' => {
                out.push(Token { kind: Kind::Punct, text: &text[i..i + 1], start });
                i += 1;
                continue;
            }
            _ => {}
        }
        // A word: everything up to whitespace, punctuation, a quote or a name sigil. `c"…"`
        // (a string constant) is the word `c` and a string.
        let mut j = i + 1;
        while j < bytes.len() && (is_name_char(bytes[j]) || matches!(bytes[j], b'#' | b'+')) {
            j += 1;
        }
        out.push(Token { kind: Kind::Word, text: &text[i..j], start });
        i = j;
    }
    out
}

/// The end of a name starting at `i` (after its sigil), and where its text starts: a quoted name
/// keeps its quotes.
fn name_end(bytes: &[u8], i: usize) -> (usize, usize) {
    if bytes.get(i) == Some(&b'"') {
        return (string_end(bytes, i), i);
    }
    let mut j = i;
    while j < bytes.len() && is_name_char(bytes[j]) {
        j += 1;
    }
    (j, i)
}

/// The end of the string whose opening quote is at `i` (LLVM escapes are `\XX`, so the next
/// quote closes it); the end of the text if it is not closed.
fn string_end(bytes: &[u8], i: usize) -> usize {
    bytes[i + 1..].iter().position(|&b| b == b'"').map_or(bytes.len(), |j| i + j + 2)
}

/// `text` with every local name token for which `rename` returns a new name replaced by it
/// (given and returned without `%`); strings, comments and everything else are kept as they are.
pub fn rename_locals(text: &str, mut rename: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut at = 0;
    for token in tokens(text) {
        if token.kind != Kind::Local {
            continue;
        }
        if let Some(new) = rename(token.text) {
            out.push_str(&text[at..token.start]);
            out.push('%');
            out.push_str(&new);
            at = token.end();
        }
    }
    out.push_str(&text[at..]);
    out
}

/// `text` with each token for which `replace` returns a text replaced by it (the whole token,
/// sigil included).
pub fn replace_tokens(text: &str, mut replace: impl FnMut(&Token<'_>) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut at = 0;
    for token in tokens(text) {
        if let Some(new) = replace(&token) {
            out.push_str(&text[at..token.start]);
            out.push_str(&new);
            at = token.end();
        }
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, &str)> {
        tokens(text).into_iter().map(|t| (t.kind, t.text)).collect()
    }

    #[test]
    fn names_strings_and_metadata() {
        assert_eq!(
            kinds(r#"%x.1 = call i32 asm "mov.u32 $0, %tid.x;", "=r"(), !dbg !7 ; %y"#),
            vec![
                (Kind::Local, "x.1"),
                (Kind::Punct, "="),
                (Kind::Word, "call"),
                (Kind::Word, "i32"),
                (Kind::Word, "asm"),
                (Kind::Str, "\"mov.u32 $0, %tid.x;\""),
                (Kind::Punct, ","),
                (Kind::Str, "\"=r\""),
                (Kind::Punct, "("),
                (Kind::Punct, ")"),
                (Kind::Punct, ","),
                (Kind::Meta, "!dbg"),
                (Kind::Meta, "!7"),
            ]
        );
        assert_eq!(kinds(r#"br label %"a b""#)[2], (Kind::Local, "\"a b\""));
        assert_eq!(kinds("store <2 x float> <float 1.000000e+00, float -0.0>")[1], (Kind::Punct, "<"));
        assert_eq!(kinds("select i1 %c, half 0xH3C00, i64 -1")[5], (Kind::Word, "0xH3C00"));
        assert_eq!(kinds("call void @f() #8")[5], (Kind::Word, "#8"));
    }

    #[test]
    fn renaming_touches_names_only() {
        let line = r#"  %a = call i32 asm "add $0, %a;", "=r,r"(i32 %a), !dbg !3 ; %a"#;
        let out = rename_locals(line, |n| (n == "a").then(|| "b".to_string()));
        assert_eq!(out, r#"  %b = call i32 asm "add $0, %a;", "=r,r"(i32 %b), !dbg !3 ; %a"#);
        let quoted = rename_locals(r#"br label %"x y""#, |n| Some(n.replace("x", "z")));
        assert_eq!(quoted, r#"br label %"z y""#);
    }
}
