package wallet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// seaportABI is the part of Seaport's interface OpenSea's fulfilment data
// calls: the basic and the advanced fulfilment (Seaport 1.5 and 1.6 share
// them). OpenSea answers the call as a function name and its arguments by
// name; the calldata is packed here with go-ethereum's ABI encoder.
const seaportABI = `[
{"type":"function","name":"fulfillBasicOrder_efficient_6GL6yc","stateMutability":"payable","outputs":[{"type":"bool","name":"fulfilled"}],
 "inputs":[{"name":"parameters","type":"tuple","components":[
  {"name":"considerationToken","type":"address"},{"name":"considerationIdentifier","type":"uint256"},{"name":"considerationAmount","type":"uint256"},
  {"name":"offerer","type":"address"},{"name":"zone","type":"address"},{"name":"offerToken","type":"address"},
  {"name":"offerIdentifier","type":"uint256"},{"name":"offerAmount","type":"uint256"},{"name":"basicOrderType","type":"uint8"},
  {"name":"startTime","type":"uint256"},{"name":"endTime","type":"uint256"},{"name":"zoneHash","type":"bytes32"},
  {"name":"salt","type":"uint256"},{"name":"offererConduitKey","type":"bytes32"},{"name":"fulfillerConduitKey","type":"bytes32"},
  {"name":"totalOriginalAdditionalRecipients","type":"uint256"},
  {"name":"additionalRecipients","type":"tuple[]","components":[{"name":"amount","type":"uint256"},{"name":"recipient","type":"address"}]},
  {"name":"signature","type":"bytes"}]}]},
{"type":"function","name":"fulfillAdvancedOrder","stateMutability":"payable","outputs":[{"type":"bool","name":"fulfilled"}],
 "inputs":[
  {"name":"advancedOrder","type":"tuple","components":[
   {"name":"parameters","type":"tuple","components":[
    {"name":"offerer","type":"address"},{"name":"zone","type":"address"},
    {"name":"offer","type":"tuple[]","components":[{"name":"itemType","type":"uint8"},{"name":"token","type":"address"},
      {"name":"identifierOrCriteria","type":"uint256"},{"name":"startAmount","type":"uint256"},{"name":"endAmount","type":"uint256"}]},
    {"name":"consideration","type":"tuple[]","components":[{"name":"itemType","type":"uint8"},{"name":"token","type":"address"},
      {"name":"identifierOrCriteria","type":"uint256"},{"name":"startAmount","type":"uint256"},{"name":"endAmount","type":"uint256"},
      {"name":"recipient","type":"address"}]},
    {"name":"orderType","type":"uint8"},{"name":"startTime","type":"uint256"},{"name":"endTime","type":"uint256"},
    {"name":"zoneHash","type":"bytes32"},{"name":"salt","type":"uint256"},{"name":"conduitKey","type":"bytes32"},
    {"name":"totalOriginalConsiderationItems","type":"uint256"}]},
   {"name":"numerator","type":"uint120"},{"name":"denominator","type":"uint120"},{"name":"signature","type":"bytes"},{"name":"extraData","type":"bytes"}]},
  {"name":"criteriaResolvers","type":"tuple[]","components":[{"name":"orderIndex","type":"uint256"},{"name":"side","type":"uint8"},
    {"name":"index","type":"uint256"},{"name":"identifier","type":"uint256"},{"name":"criteriaProof","type":"bytes32[]"}]},
  {"name":"fulfillerConduitKey","type":"bytes32"},{"name":"recipient","type":"address"}]}
]`

var seaport = sync.OnceValue(func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(seaportABI))
	if err != nil {
		panic("wallet: the Seaport ABI does not parse: " + err.Error())
	}
	return a
})

// seaportCalldata packs OpenSea's fulfilment call: function names the
// Seaport method (its name, or its signature), input its arguments by name.
func seaportCalldata(function string, input json.RawMessage) ([]byte, error) {
	name, _, _ := strings.Cut(strings.TrimSpace(function), "(")
	m, ok := seaport().Methods[name]
	if !ok {
		return nil, fmt.Errorf("OpenSea asks for Seaport's %s, which this tool does not call: nothing was signed", name)
	}
	var named map[string]json.RawMessage
	if err := json.Unmarshal(input, &named); err != nil {
		return nil, fmt.Errorf("OpenSea's input_data is not an object: %w", err)
	}
	vals := make([]any, len(m.Inputs))
	for i, in := range m.Inputs {
		raw, ok := named[in.Name]
		if !ok {
			return nil, fmt.Errorf("OpenSea's input_data lacks %s", in.Name)
		}
		v, err := abiValue(in.Type, raw, in.Name)
		if err != nil {
			return nil, err
		}
		vals[i] = v.Interface()
	}
	packed, err := m.Inputs.Pack(vals...)
	if err != nil {
		return nil, fmt.Errorf("packing Seaport's %s: %w", name, err)
	}
	return append(append([]byte{}, m.ID...), packed...), nil
}

// abiValue converts a JSON value into the Go value go-ethereum packs for t.
func abiValue(t abi.Type, raw json.RawMessage, path string) (reflect.Value, error) {
	bad := func(what string) (reflect.Value, error) {
		return reflect.Value{}, fmt.Errorf("OpenSea's input_data %s is not %s", path, what)
	}
	switch t.T {
	case abi.TupleTy:
		var named map[string]json.RawMessage
		if json.Unmarshal(raw, &named) != nil {
			return bad("an object")
		}
		out := reflect.New(t.GetType()).Elem()
		for i, name := range t.TupleRawNames {
			r, ok := named[name]
			if !ok {
				return reflect.Value{}, fmt.Errorf("OpenSea's input_data %s lacks %s", path, name)
			}
			v, err := abiValue(*t.TupleElems[i], r, path+"."+name)
			if err != nil {
				return reflect.Value{}, err
			}
			out.Field(i).Set(v)
		}
		return out, nil
	case abi.SliceTy:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return bad("a list")
		}
		out := reflect.MakeSlice(t.GetType(), len(items), len(items))
		for i, r := range items {
			v, err := abiValue(*t.Elem, r, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return reflect.Value{}, err
			}
			out.Index(i).Set(v)
		}
		return out, nil
	case abi.AddressTy:
		var s string
		if json.Unmarshal(raw, &s) != nil || !common.IsHexAddress(s) {
			return bad("an address")
		}
		return reflect.ValueOf(common.HexToAddress(s)), nil
	case abi.UintTy:
		n, ok := jsonUint(raw)
		if !ok || n.BitLen() > t.Size {
			return bad(fmt.Sprintf("a uint%d", t.Size))
		}
		if t.GetType().Kind() == reflect.Pointer {
			return reflect.ValueOf(n), nil
		}
		return reflect.ValueOf(n.Uint64()).Convert(t.GetType()), nil
	case abi.FixedBytesTy:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return bad("hex")
		}
		b, err := hexutil.Decode(s)
		if err != nil || len(b) != t.Size {
			return bad(fmt.Sprintf("%d bytes of hex", t.Size))
		}
		out := reflect.New(t.GetType()).Elem()
		reflect.Copy(out, reflect.ValueOf(b))
		return out, nil
	case abi.BytesTy:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return bad("hex")
		}
		if s == "" || s == "0x" {
			return reflect.ValueOf([]byte{}), nil
		}
		b, err := hexutil.Decode(s)
		if err != nil {
			return bad("hex")
		}
		return reflect.ValueOf(b), nil
	}
	return reflect.Value{}, fmt.Errorf("OpenSea's input_data %s has type %s, which this tool does not pack", path, t)
}

// jsonUint reads a number sent as a JSON number or a (decimal or 0x) string.
func jsonUint(raw json.RawMessage) (*big.Int, bool) {
	s := string(bytes.Trim(bytes.TrimSpace(raw), `"`))
	if h, ok := strings.CutPrefix(s, "0x"); ok {
		n, ok := new(big.Int).SetString(h, 16)
		return n, ok && n.Sign() >= 0
	}
	n, ok := new(big.Int).SetString(s, 10)
	return n, ok && n.Sign() >= 0
}
