"""Settings read from the project's config files (ddplint.analyses.configs): a count a script
reads from its JSON or YAML config is what the shipped file it loads gives for that key path
(DDP021 relies on it)."""

import textwrap

from ddplint.model.configs import MISSING, lookup, parse

TRAINER = """
import json
from omegaconf import OmegaConf
from accelerate import Accelerator

class Trainer:
    def __init__(self, cfg_path={path!r}):
        self.accelerator = Accelerator()
        self.cfg = {load}
        self.model, self.optimizer = self.accelerator.prepare(build(), make_optimizer())
        self.accum = self.cfg['train']['{key}']

    def train(self):
        while True:
            for _ in range(self.accum):
                loss = self.model(next(self.loader)).sum() / self.accum
                self.accelerator.backward(loss)
            self.optimizer.step()
            self.optimizer.zero_grad()

if __name__ == '__main__':
    Trainer().train()
"""

SCRIPT_WITH_OPTION = """
import argparse, json
from accelerate import Accelerator

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--config", type=str, default="./configs/config.json", required=True)
    args = parser.parse_args()
    with open(args.config) as f:
        cfg = json.load(f)
    accum = cfg["train"].get("accum_grad", 1)
    accelerator = Accelerator()
    model, optimizer = accelerator.prepare(build(), make_optimizer())
    for batch_idx, batch in enumerate(loader):
        loss = model(batch).sum() / accum
        accelerator.backward(loss)
        if batch_idx % accum != 0:
            continue
        optimizer.step()

if __name__ == "__main__":
    main()
"""


def lint(tmp_path, run, files):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "README.md").write_text("accelerate launch tts/train.py\n")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    run.cwd = tmp_path
    return run("check", "--no-cache", "--select", "DDP021", ".").stdout


def test_yaml_and_json_configs_give_the_value_at_a_key_path():
    text = "train:\n  lr: 1e-4  # rate\n  accumulate_num : 4\n  stages:\n    - name: a\n      accum: 8\nname: 'x'\n"
    mapping = parse(text, "yaml")
    assert lookup(mapping, ("train", "accumulate_num")) == 4
    assert lookup(mapping, ("name",)) == "x"
    assert lookup(mapping, ("train", "accum")) is MISSING  # a list item's key is out of reach
    assert lookup(mapping, ("train", "stages", "-")) == [{"name": "a", "accum": 8}]
    assert lookup(parse('{"train": {"accum_grad": 16}}', "json"), ("train", "accum_grad")) == 16
    assert lookup(parse("[1]", "json"), ("train",)) is MISSING


def test_every_item_of_a_yaml_list_of_mappings_is_kept_in_order():
    text = (
        "trainer:\n  callbacks:\n    - class_path: a.LearningRateMonitor\n      init_args:\n        logging_interval: step\n"
        "    - class_path: a.ModelCheckpoint\n      init_args:\n        monitor: \"train/loss\"\n  devices: 4\n"
    )
    mapping = parse(text, "yaml")
    items = lookup(mapping, ("trainer", "callbacks", "-"))
    assert [item["class_path"] for item in items] == ["a.LearningRateMonitor", "a.ModelCheckpoint"]
    assert lookup(items[1], ("init_args", "monitor")) == "train/loss"
    assert lookup(mapping, ("trainer", "devices")) == 4


def test_a_count_the_loaded_config_sets_to_one_accumulates_nothing(tmp_path, run):
    for load, name, text in (
        ("OmegaConf.load(cfg_path)", "tts/config.yaml", "train:\n  accumulate_num: {n}\n"),
        ("json.load(open(cfg_path))", "tts/config.json", '{{"train": {{"accumulate_num": {n}}}}}'),
    ):
        script = TRAINER.format(path=name, load=load, key="accumulate_num")
        for n, flagged in ((1, False), (4, True)):
            output = lint(tmp_path, run, {"tts/train.py": script, name: text.format(n=n)})
            assert ("tts/train.py:17:17: DDP021" in output) is flagged, (load, n, output)
        (tmp_path / name).unlink()


def test_a_key_no_config_the_run_may_load_holds_shows_no_count(tmp_path, run):
    # The path default names the script's own config, which lacks the key it reads: another
    # folder's config holding a count of 16 for that key is not the one it loads.
    script = TRAINER.format(path="tts/config.json", load="json.load(open(cfg_path))", key="accumulate_num")
    files = {"tts/train.py": script, "tts/config.json": '{"train": {"accum_grad": 16}}',
             "gpt/config.json": '{"train": {"accumulate_num": 16}}'}
    assert "DDP021" not in lint(tmp_path, run, files)


def test_a_config_the_user_must_name_is_one_beside_the_script(tmp_path, run):
    # `-c` must be passed and its default is no file of the project: the run loads one of the
    # configs kept beside the script; another folder's are another script's.
    files = {"tts/train.py": SCRIPT_WITH_OPTION, "gpt/config.json": '{"train": {"accum_grad": 16}}',
             "tts/config.json": '{"train": {"lr": 0.1}}'}
    assert "DDP021" not in lint(tmp_path, run, files)  # `.get("accum_grad", 1)`: 1
    files["tts/config.json"] = '{"train": {"accum_grad": 8}}'
    assert "tts/train.py:16:9: DDP021" in lint(tmp_path, run, files)
