import os

import torch.multiprocessing as mp


def launch_processes(main, args, num_processes):
    """Start one process per GPU, each told its own local rank."""
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    processes = []
    for local_rank in range(num_processes):
        args.local_rank = local_rank
        process = mp.Process(target=main, args=(args,))
        process.start()
        processes.append(process)
    for process in processes:
        process.join()
