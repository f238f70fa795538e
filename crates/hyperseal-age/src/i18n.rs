//! age's `localizer()` (`cli-common` feature): programs like rage select their languages through
//! it at start-up. This crate's messages are English only, so the localizer offers `en-US`, with
//! an empty message file: selecting any language succeeds and changes nothing.

use std::borrow::Cow;

use i18n_embed::fluent::FluentLanguageLoader;
use i18n_embed::{I18nAssets, LanguageLoader, Localizer};

/// The one asset: an empty `en-US/age.ftl`.
struct Assets;

const FILE: &str = "en-US/age.ftl";

impl I18nAssets for Assets {
    fn get_files(&self, file_path: &str) -> Vec<Cow<'_, [u8]>> {
        match file_path == FILE {
            true => vec![Cow::Borrowed(&b""[..])],
            false => vec![],
        }
    }

    fn filenames_iter(&self) -> Box<dyn Iterator<Item = String> + '_> {
        Box::new(std::iter::once(FILE.to_string()))
    }
}

struct English {
    loader: FluentLanguageLoader,
}

impl Localizer for English {
    fn language_loader(&self) -> &'_ dyn LanguageLoader {
        &self.loader
    }

    fn i18n_assets(&self) -> &'_ dyn I18nAssets {
        &Assets
    }
}

/// Returns the [`Localizer`] to be used for localizing this library.
pub fn localizer() -> Box<dyn Localizer> {
    let loader = FluentLanguageLoader::new("age", "en-US".parse().expect("a valid language tag"));
    Box::new(English { loader })
}
