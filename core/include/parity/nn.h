/* nn.h — layers and optimizers (included by parity.h). */
#ifndef PARITY_NN_H
#define PARITY_NN_H
#endif
