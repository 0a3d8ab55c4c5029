import os

import submitit

import main as trainer


class Job:
    def __init__(self, args):
        self.args = args

    def __call__(self):
        job_env = submitit.JobEnvironment()
        os.environ["LOCAL_RANK"] = str(job_env.local_rank)
        trainer.main(self.args)


if __name__ == "__main__":
    args = trainer.get_parser().parse_args()
    executor = submitit.AutoExecutor(folder="logs")
    executor.submit(Job(args))
