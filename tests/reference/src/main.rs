//! Renders templates with MiniJinja configured as the reference pipeline configures it: the
//! `${{ }}`, `${% %}` and `${# #}` delimiters and the crate's defaults for everything else
//! (lenient undefined, no autoescape for an unnamed template, no trim or lstrip blocks, the
//! final newline dropped).
//!
//! Reads one JSON object per line, `{"template": "...", "context": {...}}`, and answers each with
//! one line: `{"output": "..."}` or `{"error": "..."}`.

use std::io::{self, BufRead, Write};

use minijinja::syntax::SyntaxConfig;
use minijinja::{Environment, Value};
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize)]
struct Case {
    template: String,
    #[serde(default)]
    context: serde_json::Value,
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    let syntax = SyntaxConfig::builder()
        .block_delimiters("${%", "%}")
        .variable_delimiters("${{", "}}")
        .comment_delimiters("${#", "#}")
        .build()
        .expect("the dialect's delimiters are valid");
    env.set_syntax(syntax);
    env
}

fn answer(env: &Environment<'_>, line: &str) -> serde_json::Value {
    let case: Case = match serde_json::from_str(line) {
        Ok(case) => case,
        Err(err) => return json!({ "error": format!("unreadable case: {err}") }),
    };
    match env.render_str(&case.template, Value::from_serialize(&case.context)) {
        Ok(output) => json!({ "output": output }),
        Err(err) => json!({ "error": err.to_string() }),
    }
}

fn main() -> io::Result<()> {
    let env = environment();
    let stdin = io::stdin();
    let mut stdout = io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        writeln!(stdout, "{}", answer(&env, &line))?;
        stdout.flush()?;
    }
    Ok(())
}
