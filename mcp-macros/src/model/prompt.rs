//! `#[prompt]`: parameters are string-valued arguments (or extractors), messages out.

use super::{Common, CommonArgs, Errors, Site};
use crate::attr::PromptArgs;
use darling::error::Accumulator;
use syn::Signature;

/// A prompt, validated.
pub struct PromptFn {
    pub common: Common,
}

fn prompt_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a prompt name cannot be empty".into());
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "prompt name `{name}` contains whitespace\n\n= help: use letters, digits, `_`, `.` and `-`"
        ));
    }
    Ok(())
}

impl PromptFn {
    pub fn build(
        args: PromptArgs,
        attrs: &[syn::Attribute],
        sig: &mut Signature,
        site: Site,
        needs_input: bool,
        acc: &mut Accumulator,
    ) -> Option<PromptFn> {
        let mut errors = Errors { acc, ok: true };
        let common = Common::build(
            CommonArgs {
                kind: "prompt",
                name: args.name.as_ref(),
                title: args.title.clone(),
                description: args.description.as_ref(),
                description_required: true,
                icons: &args.icon,
                meta: args.meta.as_ref(),
                needs_input,
            },
            attrs,
            sig,
            site,
            prompt_name,
            &mut errors,
        );
        super::no_headers("prompt", &common.params, &mut errors);
        errors.ok.then_some(PromptFn { common })
    }
}
