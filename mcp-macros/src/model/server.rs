//! The model of a `#[server]` impl block: its type and the items of its methods.

use super::Item;
use syn::Type;

/// A `#[server] impl` block.
pub struct ServerImpl {
    pub self_ty: Box<Type>,
    /// `impl Trait for ...`: the trait's path (not allowed).
    pub trait_path: Option<syn::Path>,
    /// The impl's generic parameters, when there are any (not allowed).
    pub generics: Option<syn::punctuated::Punctuated<syn::GenericParam, syn::Token![,]>>,
    /// The items of the methods marked `#[tool]`, `#[resource]` or `#[prompt]`.
    pub items: Vec<Item>,
    /// Whether any method was marked (even if its model could not be built).
    pub marked: bool,
}
