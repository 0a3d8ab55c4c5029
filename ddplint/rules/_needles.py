"""Every rule's needles, for checks that must not import libcst (the flake8 plugin).

Generated from the rule modules by `python -m ddplint.docs`; do not edit. A test fails
when it is stale."""

import re

NEEDLES = {
    'DDP001': ('cuda', re.compile('(?:def\\s+\\w+\\s*\\(|lambda\\b)[^)]*?=\\s*[\\w.]+\\s*\\(', 0),),
    'DDP002': ('defaultdict', 'lambda',),
    'DDP003': ('DistributedSampler', 'for',),
    'DDP004': ('load', re.compile('torch\\.load\\b|serialization\\.load\\b|import\\s+torch(?:\\.serialization)?\\s+as\\b|from\\s+torch(?:\\.serialization)?\\s+import\\s+(?:\\([^)]*|[^\\n]*)\\bload\\b', 0),),
    'DDP005': ('set_sharing_strategy', 'file_system',),
    'DDP006': ('DistributedSampler', '__iter__',),
    'DDP007': ('DistributedSampler', 'DataLoader',),
    'DDP008': (('barrier', 'all_reduce', 'all_gather', 'broadcast', 'reduce', 'gather', 'scatter', 'all_to_all', 'DistributedDataParallel'), ('torch.distributed', 'from torch import distributed', 'DistributedDataParallel', 'init_process_group', 'DistributedSampler', 'LOCAL_RANK'), ('rank', 'Rank', 'RANK', 'is_main', 'main_process', 'master', 'Master', 'MASTER', 'global_zero', 'process_zero', 'is_primary', 'is_chief', 'get_ordinal', 'process_index'),),
    'DDP009': ('load_state_dict', 'DistributedDataParallel', 'save',),
    'DDP010': ('random_split', ('torch.distributed', 'from torch import distributed', 'DistributedDataParallel', 'init_process_group', 'DistributedSampler', 'LOCAL_RANK'),),
    'DDP011': ('CUDA_LAUNCH_BLOCKING',),
    'DDP012': ('add_argument', '-local_rank',),
    'DDP013': ('init_process_group', ('local_rank', 'LOCAL_RANK'),),
    'DDP014': ('save', re.compile('torch\\.save\\b|serialization\\.save\\b|import\\s+torch(?:\\.serialization)?\\s+as\\b|from\\s+torch(?:\\.serialization)?\\s+import\\s+(?:\\([^)]*|[^\\n]*)\\bsave\\b', 0), ('distributed', 'DistributedDataParallel', 'init_process_group', 'LOCAL_RANK', 'spawn'),),
    'DDP015': ('__init__', 'forward', ('torch.distributed', 'from torch import distributed', 'DistributedDataParallel', 'init_process_group', 'DistributedSampler', 'LOCAL_RANK'),),
    'DDP016': (('collate_fn', 'worker_init_fn', 'spawn(', 'Process(', 'start_processes('),),
    'DDP017': ('CUDA_VISIBLE_DEVICES', 'cuda',),
    'DDP018': ('DataLoader', ('cpu_count', 'sched_getaffinity'), ('torch.distributed', 'from torch import distributed', 'DistributedDataParallel', 'init_process_group', 'DistributedSampler', 'LOCAL_RANK'),),
}
