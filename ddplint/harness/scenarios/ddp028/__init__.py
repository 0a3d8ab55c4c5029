"""DDP028: a metric that ModelCheckpoint or EarlyStopping monitors, logged without
`sync_dist=True`. No bundled scenario; `experiment_monitored_metric.py` trains a small
LightningModule under Lightning's DDP strategy on two CPU ranks and records each rank's
ModelCheckpoint best score, with and without `sync_dist=True`. It needs the `lightning`
package; where it is not installed it says so and measures nothing.

A script run records no callback state: it cannot show the symptom."""

from ...script_symptoms import unobserved

RULE = "DDP028"

script_symptom = unobserved("the callbacks' best scores are not recorded in a script run "
                            "(experiment_monitored_metric.py measures them, with lightning installed)")
