from accelerate import Accelerator


def prepare_accelerator(args):
    log_with = "tensorboard" if args.logging_dir else None
    accelerator = Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        mixed_precision=args.mixed_precision,
        log_with=log_with,
    )
    print("accelerator device:", accelerator.device)
    return accelerator


def add_training_arguments(parser):
    parser.add_argument("--output_dir", default="output")
    parser.add_argument("--logging_dir")
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--mixed_precision", default="no")
