package wallet

// SeaportTypedData lets the tests recover the signer of a posted order.
var SeaportTypedData = seaportTypedData
