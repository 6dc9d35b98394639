//! The one place warnings are issued: each goes to stderr as `tlsping: <text>`
//! when it happens (control characters escaped: a warning can quote a server,
//! a redirect's `Location` say) and is kept as it is for `warnings[]` in the
//! JSON document.

#[derive(Debug, Default)]
pub struct Warnings {
    list: Vec<String>,
}

impl Warnings {
    pub fn new() -> Warnings {
        Warnings::default()
    }

    pub fn warn(&mut self, text: impl Into<String>) {
        let text = text.into();
        eprintln!("tlsping: {}", crate::text::printable(&text));
        self.list.push(text);
    }

    pub fn list(&self) -> &[String] {
        &self.list
    }
}
