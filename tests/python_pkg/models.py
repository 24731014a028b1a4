"""The models the AOT tests and examples lower: an MLP, a CNN with BatchNorm and max
pooling, a transformer encoder layer."""

import torch


def mlp():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    return model.eval(), (torch.randn(2, 16),)


def cnn():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 8, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(8 * 4 * 4, 10))
    with torch.no_grad():  # statistics that are not the identity
        model[1].running_mean.uniform_(-1, 1)
        model[1].running_var.uniform_(0.5, 2)
    return model.eval(), (torch.randn(2, 3, 8, 8),)


def transformer():
    torch.manual_seed(0)
    model = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
    return model.eval(), (torch.randn(2, 5, 32),)


MODELS = {"mlp": mlp, "cnn": cnn, "transformer": transformer}
