from data import split


def main(dataset):
    train, val = split(dataset)
    print(len(train), len(val))


if __name__ == "__main__":
    main(list(range(10)))
