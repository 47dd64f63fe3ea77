//! The GitHub API client every command shares: one way to build it (base URL, token) and
//! one way to say what GitHub answered when a request fails. The token is never printed.

use octocrab::Octocrab;

/// Why no client could be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("GITHUB_API_URL {url}: {}", answer(source))]
    ApiUrl {
        url: String,
        source: octocrab::Error,
    },
    #[error("GitHub client: {}", answer(.0))]
    Build(#[source] octocrab::Error),
}

/// A client of the API at `api_url`, authenticated by `token`.
pub fn client(api_url: &str, token: &str) -> Result<Octocrab, ClientError> {
    Octocrab::builder()
        .base_uri(api_url)
        .map_err(|source| ClientError::ApiUrl {
            url: api_url.to_string(),
            source,
        })?
        .personal_token(token.to_string())
        .build()
        .map_err(ClientError::Build)
}

/// GitHub's own answer (status and message) when there is one, else the client's error.
pub fn answer(e: &octocrab::Error) -> String {
    match e {
        octocrab::Error::GitHub { source, .. } => {
            format!("GitHub answered {}: {}", source.status_code, source.message)
        }
        other => other.to_string(),
    }
}

/// The HTTP status GitHub answered, when the error is GitHub's answer.
pub fn status_of(e: &octocrab::Error) -> Option<u16> {
    match e {
        octocrab::Error::GitHub { source, .. } => Some(source.status_code.as_u16()),
        _ => None,
    }
}
