//! The one global [`metrics`] recorder of the process, whichever exporters feed it
//! (Prometheus, OTLP, or both).

use std::sync::OnceLock;

use super::metrics::describe;
use crate::Error;

/// Set once a recorder was installed here: the [`metrics`] facade takes one global recorder
/// per process.
static INSTALLED: OnceLock<()> = OnceLock::new();

/// Installs `recorder` as the global [`metrics`] recorder (once per process) and describes
/// every metric of [`super::metrics`].
///
/// # Errors
/// When a recorder is installed already (by this crate or another).
pub(super) fn install_global(
    recorder: impl metrics::Recorder + Sync + 'static,
) -> Result<(), Error> {
    if INSTALLED.get().is_some() {
        return Err(Error::internal("a metrics recorder is installed already"));
    }
    metrics::set_global_recorder(recorder)
        .map_err(|e| Error::internal(format!("cannot install the metrics recorder: {e}")))?;
    let _ = INSTALLED.set(());
    describe();
    Ok(())
}
