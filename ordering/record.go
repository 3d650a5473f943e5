package ordering

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Where RecordKey looks for a record's key: the fields bloop's records
// carry, then those of a DynamoDB stream record.
const (
	fieldMeta        = "meta"
	fieldCreatedAt   = "created_at"
	fieldSeq         = "sequence_number"
	fieldDynamo      = "dynamodb"
	fieldDynamoTime  = "ApproximateCreationDateTime"
	fieldDynamoSeq   = "SequenceNumber"
	metaCreatedAt    = fieldMeta + "." + fieldCreatedAt
	metaSeq          = fieldMeta + "." + fieldSeq
	dynamoCreatedAt  = fieldDynamo + "." + fieldDynamoTime
	dynamoSeq        = fieldDynamo + "." + fieldDynamoSeq
	reasonNotObject  = "is not a JSON object"
	reasonBadJSONVal = "must be a number or a string"
)

// RecordKey returns the ordering key of a record given as one JSON object.
//
// The key is read from meta.created_at and meta.sequence_number (bloop's
// shape). For each of the two that is absent, RecordKey falls back to the
// DynamoDB stream record's dynamodb.ApproximateCreationDateTime or
// dynamodb.SequenceNumber; a field that is present but malformed is an
// error, with no fallback. created_at is a JSON number (epoch seconds) or a
// string (epoch seconds or RFC 3339), see ParseTimestamp;
// sequence_number is a JSON string or a JSON integer, see ParseSeqNum.
// Field names match exactly, case included. JSON numbers are read from
// their text, never through float64.
//
// Errors are *KeyError, naming the field and quoting its JSON text:
//
//	meta.sequence_number "12x" is not a decimal integer
func RecordKey(record []byte) (Key, error) {
	top, err := jsonObject(record)
	if err != nil {
		return Key{}, &KeyError{Field: "record", Reason: err.Error()}
	}
	meta, err := subObject(top, fieldMeta)
	if err != nil {
		return Key{}, err
	}
	var dynamo map[string]json.RawMessage
	if meta[fieldCreatedAt] == nil || meta[fieldSeq] == nil {
		if dynamo, err = subObject(top, fieldDynamo); err != nil {
			return Key{}, err
		}
	}
	at, atName, err := pick(meta, fieldCreatedAt, metaCreatedAt, dynamo, fieldDynamoTime, dynamoCreatedAt)
	if err != nil {
		return Key{}, err
	}
	seq, seqName, err := pick(meta, fieldSeq, metaSeq, dynamo, fieldDynamoSeq, dynamoSeq)
	if err != nil {
		return Key{}, err
	}
	t, err := jsonTimestamp(at, atName)
	if err != nil {
		return Key{}, err
	}
	n, err := jsonSeqNum(seq, seqName)
	if err != nil {
		return Key{}, err
	}
	return Key{CreatedAt: t, Seq: n}, nil
}

// jsonObject decodes the members of a JSON object, keeping their values raw.
func jsonObject(data []byte) (map[string]json.RawMessage, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if json.Valid(data) {
			return nil, errors.New(reasonNotObject)
		}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("is not valid JSON: %v (column %d)", se, se.Offset)
		}
		return nil, fmt.Errorf("is not valid JSON: %v", err)
	}
	return obj, nil
}

// subObject returns the object member name of obj, or nil when it is absent.
func subObject(obj map[string]json.RawMessage, name string) (map[string]json.RawMessage, error) {
	raw, ok := obj[name]
	if !ok {
		return nil, nil
	}
	sub, err := jsonObject(raw)
	if err != nil || sub == nil {
		return nil, &KeyError{Field: name, Text: shorten(string(raw)), Reason: reasonNotObject}
	}
	return sub, nil
}

// pick returns the primary field if present, else the fallback, with the
// dotted name of the one it took. Both absent is a "missing" KeyError.
func pick(primary map[string]json.RawMessage, pName, pPath string,
	fallback map[string]json.RawMessage, fName, fPath string) (json.RawMessage, string, error) {
	if v, ok := primary[pName]; ok {
		return v, pPath, nil
	}
	if v, ok := fallback[fName]; ok {
		return v, fPath, nil
	}
	return nil, "", &KeyError{Field: pPath, Reason: "is missing (and so is " + fPath + ")"}
}

// jsonText returns the text a JSON number or string stands for.
func jsonText(raw json.RawMessage, name string) (string, error) {
	switch {
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", &KeyError{Field: name, Text: shorten(string(raw)), Reason: "is not a valid JSON string"}
		}
		return s, nil
	case len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9'):
		return string(raw), nil
	}
	return "", &KeyError{Field: name, Text: shorten(string(raw)), Reason: reasonBadJSONVal}
}

func jsonTimestamp(raw json.RawMessage, name string) (Timestamp, error) {
	s, err := jsonText(raw, name)
	if err != nil {
		return Timestamp{}, err
	}
	t, err := ParseTimestamp(s)
	if err != nil {
		return Timestamp{}, renamed(err, name, raw)
	}
	return t, nil
}

func jsonSeqNum(raw json.RawMessage, name string) (SeqNum, error) {
	s, err := jsonText(raw, name)
	if err != nil {
		return SeqNum{}, err
	}
	n, err := ParseSeqNum(s)
	if err != nil {
		return SeqNum{}, renamed(err, name, raw)
	}
	return n, nil
}

// renamed restates a parse error about a record's field: the field's dotted
// name and its JSON text.
func renamed(err error, name string, raw json.RawMessage) error {
	var ke *KeyError
	if !errors.As(err, &ke) {
		return err
	}
	return &KeyError{Field: name, Text: shorten(string(raw)), Reason: ke.Reason}
}
