//! `skills/get` (Skills extension): the entry of the skill whose `SKILL.md` is at `uri`,
//! with the lists' caching fields. (`skills/list` is a list: the ladder answers it from
//! `lists`.)

use serde_json::json;

use crate::handler::registry::Registry;
use crate::protocol::{CachePolicy, ErrorObject, GetSkillResult, RequestId};
use crate::server::Server;
use crate::server::envelope::{ParamsView, string_field};
use crate::server::outcome::Outcome;
use crate::server::reply::Reply;

pub(in crate::server) fn get_skill(
    server: &Server,
    reg: &Registry,
    id: &RequestId,
    view: &ParamsView<'_>,
    cache: CachePolicy,
) -> Result<Outcome, ErrorObject> {
    let uri = string_field(view.uri, "uri")?;
    let skill = reg.skills.get(&uri).ok_or_else(|| {
        ErrorObject::invalid_params_with(
            format!("No skill is served at {uri}"),
            json!({ "uri": uri }),
        )
    })?;
    let mut result = GetSkillResult::new(&skill.entry, cache);
    Ok(Outcome::Ready(Reply::stamped(
        id,
        &mut result,
        server.stamp(),
    )))
}
