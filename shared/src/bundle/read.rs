//! Reading a bundle: schema check, migration of older majors, clear errors.

use super::{Bundle, SCHEMA_MAJOR, SCHEMA_PREFIX};

/// Why a file could not be read as a bundle.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not an llmsweep bundle: {0}")]
    NotABundle(String),
    #[error(
        "written by a newer llmsweep (schema {found}); this version reads up to {SCHEMA_PREFIX}{supported}: upgrade llmsweep to open it"
    )]
    NewerSchema { found: String, supported: u32 },
    #[error("bundle is damaged: {0}")]
    Invalid(String),
}

/// Just the schema, to tell why a text is not a readable bundle. Other fields are skipped
/// without being built.
#[derive(serde::Deserialize)]
struct Head {
    #[serde(default)]
    schema: Option<serde_json::Value>,
}

impl Bundle {
    /// Parses a bundle, refusing newer schemas and migrating older ones.
    ///
    /// The text is parsed straight into the types (a tree of `serde_json::Value`s first takes
    /// three times as long on a bundle of 100,000 requests, which the viewer opens in a
    /// browser); only when that fails is it read again, for the schema, to say why.
    pub fn from_json(text: &str) -> Result<Bundle, BundleError> {
        match serde_json::from_str::<Bundle>(text) {
            Ok(b) => {
                let schema = serde_json::Value::String(b.schema.clone());
                check_schema(Some(&schema))?;
                // Major 1 is the first schema; once there is a `/2`, older majors are migrated here.
                Ok(b)
            }
            Err(e) => {
                let head: Head = serde_json::from_str(text).map_err(|e| match e.classify() {
                    serde_json::error::Category::Data => BundleError::NotABundle(
                        "the JSON is not an object with a `schema` field".into(),
                    ),
                    _ => BundleError::Json(e),
                })?;
                check_schema(head.schema.as_ref())?;
                Err(BundleError::Invalid(e.to_string()))
            }
        }
    }

    /// Like [`Bundle::from_json`], from an already parsed JSON value.
    pub fn from_value(value: serde_json::Value) -> Result<Bundle, BundleError> {
        check_schema(value.get("schema"))?;
        // Major 1 is the first schema; a future `/2` reader migrates `/1` values here.
        serde_json::from_value(value).map_err(|e| BundleError::Invalid(e.to_string()))
    }

    /// Serialises the bundle as pretty JSON (the on-disk form).
    pub fn to_json(&self) -> String {
        // Serialising plain data with string keys cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

/// Refuses a missing, malformed or newer schema.
fn check_schema(schema: Option<&serde_json::Value>) -> Result<(), BundleError> {
    let schema = match schema {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(_) => return Err(BundleError::NotABundle("`schema` is not a string".into())),
        None => {
            return Err(BundleError::NotABundle(
                "no `schema` field (expected \"llmsweep.bundle/1\")".into(),
            ));
        }
    };
    let major = schema_major(&schema)?;
    if major > SCHEMA_MAJOR {
        return Err(BundleError::NewerSchema {
            found: schema,
            supported: SCHEMA_MAJOR,
        });
    }
    Ok(())
}

fn schema_major(schema: &str) -> Result<u32, BundleError> {
    let Some(rest) = schema.strip_prefix(SCHEMA_PREFIX) else {
        return Err(BundleError::NotABundle(format!(
            "schema is {schema:?}, expected \"{SCHEMA_PREFIX}<version>\""
        )));
    };
    let major = rest.split('.').next().unwrap_or_default();
    major
        .parse()
        .map_err(|_| BundleError::NotABundle(format!("schema version {rest:?} is not a number")))
}
