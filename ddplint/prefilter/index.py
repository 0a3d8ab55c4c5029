"""Every rule's needles and screen, for checks that must not import libcst (the flake8
plugin).

Generated from the rule modules by `python -m ddplint.docs`; do not edit. A test fails
when it is stale."""

import re

from ddplint.prefilter.project_facts import ProjectFact
from ddplint.prefilter.screens import CallInDefault, Calls, Mentions, Subclasses, UnreadSelfAttribute

NEEDLES = {
    'DDP001': (('cuda', '.to', 'device'), ('cuda', re.compile('\\.to\\s*\\([^)]*?\\b\\d', 0), re.compile('device\\s*=\\s*\\d', 0)), (re.compile('def\\s+\\w+\\s*\\([^)]*?=\\s*[\\w.]+\\s*\\(', 0), re.compile('lambda\\b[^)]*?=\\s*[\\w.]+\\s*\\(', 0)),),
    'DDP002': ('defaultdict', 'lambda',),
    'DDP003': (('DistributedSampler', 'create_loader'), 'for',),
    'DDP004': (('load',), (re.compile('serialization\\.load\\b', 0), re.compile('torch\\.load\\b', 0), re.compile('import\\s(?:[^\\n]|\\\\\\n)*?\\b(?:torch|torch\\.serialization)\\s+as\\b', 0), re.compile('from\\s+torch\\s+import\\s+(?:\\([^)]*|(?:[^\\n]|\\\\\\n)*?)\\bload\\b', 0), re.compile('from\\s+torch\\s+import\\s+(?:\\([^)]*|(?:[^\\n]|\\\\\\n)*?)\\bserialization\\b', 0), re.compile('from\\s+torch\\.serialization\\s+import\\s+(?:\\([^)]*|(?:[^\\n]|\\\\\\n)*?)\\bload\\b', 0)), ('distributed', 'Distributed', 'spawn', 'start_processes', 'RANK', 'Accelerator('),),
    'DDP005': (('set_sharing_strategy',), (re.compile('multiprocessing\\.set_sharing_strategy\\b', 0), re.compile('import\\s(?:[^\\n]|\\\\\\n)*?\\b(?:torch|torch\\.multiprocessing)\\s+as\\b', 0), re.compile('from\\s+torch\\s+import\\s+(?:\\([^)]*|(?:[^\\n]|\\\\\\n)*?)\\bmultiprocessing\\b', 0), re.compile('from\\s+torch\\.multiprocessing\\s+import\\s+(?:\\([^)]*|(?:[^\\n]|\\\\\\n)*?)\\bset_sharing_strategy\\b', 0)), 'file_system',),
    'DDP006': ('__iter__', ('DistributedSampler', 'num_replicas'),),
    'DDP007': ('DistributedSampler', 'DataLoader',),
    'DDP008': (('torch.distributed', 'from torch import distributed', 'DistributedDataParallel', 'init_process_group', 'DistributedSampler', 'LOCAL_RANK', 'global_rank', 'Accelerator('), ('barrier', 'all_reduce', 'all_gather', 'broadcast', 'reduce', 'gather', 'scatter', 'all_to_all', 'DistributedDataParallel'), ('rank', 'Rank', 'RANK', 'is_main', 'main_process', 'master', 'Master', 'MASTER', 'global_zero', 'process_zero', 'is_primary', 'is_chief', 'get_ordinal', 'process_index'),),
    'DDP009': ('load_state_dict', 'DistributedDataParallel', 'save',),
    'DDP010': ('random_split', ('torch.distributed', 'from torch import distributed', 'DistributedDataParallel', 'init_process_group', 'DistributedSampler', 'LOCAL_RANK', 'global_rank', 'Accelerator('),),
    'DDP011': ('CUDA_LAUNCH_BLOCKING',),
    'DDP012': ('add_argument', '-local_rank',),
    'DDP013': (('init_process_group',), (re.compile('distributed\\.init_process_group\\b', 0), re.compile('distributed_c10d\\.init_process_group\\b', 0), re.compile('import\\s(?:[^\\n]|\\\\\\n)*?\\b(?:torch|torch\\.distributed|torch\\.distributed\\.distributed_c10d)\\s+as\\b', 0), re.compile('from\\s+torch\\s+import\\s+(?:\\([^)]*|(?:[^\\n]|\\\\\\n)*?)\\bdistributed\\b', 0), re.compile('from\\s+torch\\.distributed\\s+import\\s+(?:\\([^)]*|(?:[^\\n]|\\\\\\n)*?)\\bdistributed_c10d\\b', 0), re.compile('from\\s+torch\\.distributed\\s+import\\s+(?:\\([^)]*|(?:[^\\n]|\\\\\\n)*?)\\binit_process_group\\b', 0), re.compile('from\\s+torch\\.distributed\\.distributed_c10d\\s+import\\s+(?:\\([^)]*|(?:[^\\n]|\\\\\\n)*?)\\binit_process_group\\b', 0)), ('local_rank', 'LOCAL_RANK'),),
    'DDP014': ('save', (re.compile('serialization\\.save\\b', 0), re.compile('torch\\.save\\b', 0), re.compile('import\\s(?:[^\\n]|\\\\\\n)*?\\b(?:torch|torch\\.serialization)\\s+as\\b', 0), re.compile('from\\s+torch\\s+import\\s+(?:\\([^)]*|(?:[^\\n]|\\\\\\n)*?)\\bsave\\b', 0), re.compile('from\\s+torch\\s+import\\s+(?:\\([^)]*|(?:[^\\n]|\\\\\\n)*?)\\bserialization\\b', 0), re.compile('from\\s+torch\\.serialization\\s+import\\s+(?:\\([^)]*|(?:[^\\n]|\\\\\\n)*?)\\bsave\\b', 0)), ('distributed', 'DistributedDataParallel', 'init_process_group', 'LOCAL_RANK', 'spawn'),),
    'DDP015': ('__init__', 'forward', ('torch.distributed', 'from torch import distributed', 'DistributedDataParallel', 'init_process_group', 'DistributedSampler', 'LOCAL_RANK', 'global_rank', 'Accelerator('),),
    'DDP016': (('collate_fn', 'worker_init_fn', 'spawn(', 'Process(', 'start_processes('),),
    'DDP017': ('CUDA_VISIBLE_DEVICES', ('cuda', re.compile('\\.to\\(\\s*\\d', 0)),),
    'DDP018': ('DataLoader', ('cpu_count', 'sched_getaffinity'), ('torch.distributed', 'from torch import distributed', 'DistributedDataParallel', 'init_process_group', 'DistributedSampler', 'LOCAL_RANK', 'global_rank', 'Accelerator('),),
    'DDP019': ('DistributedDataParallel', '.module', ('backward', 'ApexScaler', 'NativeScaler'),),
    'DDP020': ('DistributedDataParallel', 'device_ids', ('.to(', '.cuda('),),
    'DDP021': (('DistributedDataParallel', 'Accelerator('), ('backward', 'ApexScaler', 'NativeScaler'), ('step', 'no_sync', 'ApexScaler', 'NativeScaler'),),
    'DDP022': (('DistributedSampler', 'create_loader'), ('all_reduce', 'all_gather', 'gather', 'reduce'),),
    'DDP023': ('DistributedDataParallel', 'cuda',),
    'DDP024': ('find_unused_parameters', 'DistributedDataParallel',),
}

SCREENS = {
    'DDP001': CallInDefault(methods=('cuda', 'to'), keywords=('device',), suffixes=('Tensor',)),
    'DDP002': Calls(targets=('collections.defaultdict',), methods=(), without_keyword=None, lambda_first=True, shipped=()),
    'DDP003': Calls(targets=('timm.data.create_loader', 'timm.data.loader.create_loader', 'torch.utils.data.DistributedSampler', 'torch.utils.data.distributed.DistributedSampler'), methods=(), without_keyword=None, lambda_first=False, shipped=()),
    'DDP004': Calls(targets=('torch.load', 'torch.serialization.load'), methods=(), without_keyword='map_location', lambda_first=False, shipped=()),
    'DDP005': Calls(targets=('torch.multiprocessing.set_sharing_strategy',), methods=(), without_keyword=None, lambda_first=False, shipped=()),
    'DDP006': Subclasses(targets=('torch.utils.data.DistributedSampler', 'torch.utils.data.Sampler', 'torch.utils.data.distributed.DistributedSampler', 'torch.utils.data.sampler.Sampler')),
    'DDP007': Calls(targets=('torch.utils.data.DistributedSampler', 'torch.utils.data.distributed.DistributedSampler'), methods=(), without_keyword=None, lambda_first=False, shipped=()),
    'DDP008': Calls(targets=('torch.distributed.all_gather', 'torch.distributed.all_gather_into_tensor', 'torch.distributed.all_gather_object', 'torch.distributed.all_reduce', 'torch.distributed.all_to_all', 'torch.distributed.all_to_all_single', 'torch.distributed.barrier', 'torch.distributed.broadcast', 'torch.distributed.broadcast_object_list', 'torch.distributed.distributed_c10d.all_gather', 'torch.distributed.distributed_c10d.all_gather_into_tensor', 'torch.distributed.distributed_c10d.all_gather_object', 'torch.distributed.distributed_c10d.all_reduce', 'torch.distributed.distributed_c10d.all_to_all', 'torch.distributed.distributed_c10d.all_to_all_single', 'torch.distributed.distributed_c10d.barrier', 'torch.distributed.distributed_c10d.broadcast', 'torch.distributed.distributed_c10d.broadcast_object_list', 'torch.distributed.distributed_c10d.gather', 'torch.distributed.distributed_c10d.gather_object', 'torch.distributed.distributed_c10d.monitored_barrier', 'torch.distributed.distributed_c10d.reduce', 'torch.distributed.distributed_c10d.reduce_scatter', 'torch.distributed.distributed_c10d.reduce_scatter_tensor', 'torch.distributed.distributed_c10d.scatter', 'torch.distributed.distributed_c10d.scatter_object_list', 'torch.distributed.gather', 'torch.distributed.gather_object', 'torch.distributed.monitored_barrier', 'torch.distributed.reduce', 'torch.distributed.reduce_scatter', 'torch.distributed.reduce_scatter_tensor', 'torch.distributed.scatter', 'torch.distributed.scatter_object_list', 'torch.nn.parallel.DistributedDataParallel', 'torch.nn.parallel.distributed.DistributedDataParallel'), methods=(), without_keyword=None, lambda_first=False, shipped=()),
    'DDP009': Calls(targets=('torch.save', 'torch.serialization.save'), methods=(), without_keyword=None, lambda_first=False, shipped=()),
    'DDP010': Calls(targets=('torch.utils.data.dataset.random_split', 'torch.utils.data.random_split'), methods=(), without_keyword=None, lambda_first=False, shipped=()),
    'DDP011': Mentions(names=('CUDA_LAUNCH_BLOCKING',)),
    'DDP012': Calls(targets=(), methods=('add_argument',), without_keyword=None, lambda_first=False, shipped=()),
    'DDP013': Calls(targets=('torch.distributed.distributed_c10d.init_process_group', 'torch.distributed.init_process_group'), methods=(), without_keyword=None, lambda_first=False, shipped=()),
    'DDP014': Calls(targets=('torch.save', 'torch.serialization.save'), methods=(), without_keyword=None, lambda_first=False, shipped=()),
    'DDP015': UnreadSelfAttribute(method='forward', package='torch.nn.', layers=('Linear', 'Bilinear', 'LazyLinear', 'Conv', 'LazyConv', 'Embedding', 'BatchNorm', 'LazyBatchNorm', 'SyncBatchNorm', 'LayerNorm', 'GroupNorm', 'RMSNorm', 'RNN', 'LSTM', 'GRU', 'MultiheadAttention', 'Transformer', 'PReLU', 'Sequential', 'ModuleList', 'ModuleDict')),
    'DDP016': Calls(targets=('multiprocessing.Process', 'multiprocessing.context.Process', 'torch.multiprocessing.Process', 'torch.multiprocessing.spawn', 'torch.multiprocessing.spawn.spawn', 'torch.multiprocessing.spawn.start_processes', 'torch.multiprocessing.start_processes', 'torch.utils.data.DataLoader', 'torch.utils.data.dataloader.DataLoader'), methods=('Process',), without_keyword=None, lambda_first=False, shipped=('collate_fn', 'worker_init_fn', 'fn', 'target')),
    'DDP017': Mentions(names=('CUDA_VISIBLE_DEVICES',)),
    'DDP018': Calls(targets=('torch.utils.data.DataLoader', 'torch.utils.data.dataloader.DataLoader'), methods=(), without_keyword=None, lambda_first=False, shipped=()),
    'DDP019': Calls(targets=('torch.nn.parallel.DistributedDataParallel', 'torch.nn.parallel.distributed.DistributedDataParallel'), methods=(), without_keyword=None, lambda_first=False, shipped=()),
    'DDP020': Calls(targets=('torch.nn.parallel.DistributedDataParallel', 'torch.nn.parallel.distributed.DistributedDataParallel'), methods=(), without_keyword=None, lambda_first=False, shipped=()),
    'DDP021': Calls(targets=('accelerate.Accelerator', 'accelerate.accelerator.Accelerator', 'torch.nn.parallel.DistributedDataParallel', 'torch.nn.parallel.distributed.DistributedDataParallel'), methods=(), without_keyword=None, lambda_first=False, shipped=()),
    'DDP022': Calls(targets=('timm.data.create_loader', 'timm.data.loader.create_loader', 'torch.utils.data.DistributedSampler', 'torch.utils.data.distributed.DistributedSampler'), methods=(), without_keyword=None, lambda_first=False, shipped=()),
    'DDP023': Calls(targets=('torch.nn.parallel.DistributedDataParallel', 'torch.nn.parallel.distributed.DistributedDataParallel'), methods=(), without_keyword=None, lambda_first=False, shipped=()),
    'DDP024': Calls(targets=('torch.nn.parallel.DistributedDataParallel', 'torch.nn.parallel.distributed.DistributedDataParallel'), methods=(), without_keyword=None, lambda_first=False, shipped=()),
}

# The shared analyses each rule reads (by class name): the project may feed them.
ANALYSES = {
    'DDP001': (),
    'DDP002': ('Definitions',),
    'DDP003': ('LoaderFlow',),
    'DDP004': (),
    'DDP005': (),
    'DDP006': ('SamplerClasses',),
    'DDP007': ('Branches', 'LoaderFlow'),
    'DDP008': ('Branches', 'GradientMode', 'RankRegions', 'WrappedModels'),
    'DDP009': ('WrappedModels',),
    'DDP010': (),
    'DDP011': (),
    'DDP012': (),
    'DDP013': (),
    'DDP014': ('RankRegions',),
    'DDP015': (),
    'DDP016': ('Definitions',),
    'DDP017': ('Branches',),
    'DDP018': (),
    'DDP019': ('GradientMode', 'RankRegions', 'WrappedModels'),
    'DDP020': (),
    'DDP021': ('WrappedModels',),
    'DDP022': ('LoaderFlow',),
    'DDP023': (),
    'DDP024': (),
}

# The project facts in each rule's `opened_by` (rules not named here have none).
OPENED_BY = {
    'DDP001': frozenset({ProjectFact.CUDA_HELPER}),
    'DDP003': frozenset({ProjectFact.ENDLESS_WRAPPER, ProjectFact.SAMPLER_BUILDER}),
    'DDP006': frozenset({ProjectFact.SAMPLER_CLASS}),
    'DDP007': frozenset({ProjectFact.SAMPLER_BUILDER}),
    'DDP009': frozenset({ProjectFact.LOADS_WRAPPER_CHECKPOINT}),
    'DDP010': frozenset({ProjectFact.DISTRIBUTED}),
    'DDP015': frozenset({ProjectFact.WRAPPED_CLASS}),
    'DDP016': frozenset({ProjectFact.LOADER_CLASS, ProjectFact.LOADER_CLASS_MODULE}),
    'DDP018': frozenset({ProjectFact.DISTRIBUTED}),
    'DDP019': frozenset({ProjectFact.HANDS_INNER_MODULE}),
}

# The project facts in each rule's `unscreened_by` (rules not named here have none).
UNSCREENED_BY = {
    'DDP009': frozenset({ProjectFact.LOADS_WRAPPER_CHECKPOINT}),
    'DDP016': frozenset({ProjectFact.LOADER_CLASS_MODULE}),
    'DDP019': frozenset({ProjectFact.HANDS_INNER_MODULE}),
}
