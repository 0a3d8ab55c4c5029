"""Model-parallel groups: data, tensor and pipeline parallel ranks of this process."""
import torch.distributed as dist

_TP, _PP = 1, 1


def initialize_model_parallel(tp, pp):
    global _TP, _PP
    _TP, _PP = tp, pp


def get_tensor_model_parallel_rank():
    return dist.get_rank() % _TP


def get_pipeline_model_parallel_rank():
    return (dist.get_rank() // _TP) % _PP


def get_data_parallel_rank():
    return dist.get_rank() // (_TP * _PP)


def is_pipeline_last_stage():
    return get_pipeline_model_parallel_rank() == _PP - 1
