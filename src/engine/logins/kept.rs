//! Where a login's JSON is kept, as a refresh reads and writes it: a file, or an item of the
//! user's Keychain holding the same JSON.

use std::path::Path;

use anyhow::{Result, anyhow};

use super::User;
use super::keychain::Item;
use super::store::{self, Stored};

/// Where a login's JSON is kept: a file, or an item of the user's Keychain. A refresh reads
/// it, asks whether it can be written back, and writes it back, the same way for each.
pub enum Store<'a> {
    File(&'a Path),
    Keychain(Item, &'a User<'a>),
}

impl Store<'_> {
    /// The store as it is now.
    pub fn read(&self) -> Result<Stored> {
        match self {
            Store::File(path) => Stored::read(path),
            Store::Keychain(item, user) => item
                .read(user)?
                .ok_or_else(|| anyhow!("it is no longer in the Keychain")),
        }
    }

    /// Whether the store, as `now`, can be written back as it is found: asked before a
    /// refresh spends a token that only the written answer replaces.
    pub fn replaceable(&self, now: &Stored) -> Result<()> {
        match self {
            Store::File(path) => store::replaceable(path),
            Store::Keychain(item, _) => item.writable(&now.text),
        }
    }

    /// Writes `text` as the whole of the store.
    pub fn replace(&self, text: &str) -> Result<()> {
        match self {
            Store::File(path) => store::replace(path, text),
            Store::Keychain(item, user) => item.write(text, user),
        }
    }
}
