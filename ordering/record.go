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
// Field names match exactly, case included; of duplicate names the last
// wins, as in encoding/json. JSON numbers are read from
// their text, never through float64.
//
// Errors are *KeyError, naming the field and quoting its JSON text:
//
//	meta.sequence_number "12x" is not a decimal integer
func RecordKey(record []byte) (Key, error) {
	if k, ok := fastRecordKey(record); ok {
		return k.key(), nil
	}
	return recordKeySlow(record)
}

// recordKeySlow is RecordKey with encoding/json's validation, for every
// record: exact for all of them, errors included, but it was 83% of cdclog
// merge's CPU. RecordKey takes it only when fastRecordKey declines.
func recordKeySlow(record []byte) (Key, error) {
	if !json.Valid(record) {
		return Key{}, &KeyError{Field: "record", Reason: syntaxReason(record)}
	}
	top, ok := findMembers(record, fieldMeta, fieldDynamo)
	if !ok {
		return Key{}, &KeyError{Field: "record", Reason: reasonNotObject}
	}
	meta, err := subObject(top[0], fieldMeta, fieldCreatedAt, fieldSeq)
	if err != nil {
		return Key{}, err
	}
	var dynamo members
	if meta[0] == nil || meta[1] == nil {
		if dynamo, err = subObject(top[1], fieldDynamo, fieldDynamoTime, fieldDynamoSeq); err != nil {
			return Key{}, err
		}
	}
	at, atName, err := pick(meta[0], metaCreatedAt, dynamo[0], dynamoCreatedAt)
	if err != nil {
		return Key{}, err
	}
	seq, seqName, err := pick(meta[1], metaSeq, dynamo[1], dynamoSeq)
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

// syntaxReason says why data is not valid JSON, with the column.
func syntaxReason(data []byte) string {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return "starts with a byte order mark (EF BB BF), which is allowed only at the start of a file"
	}
	err := json.Unmarshal(data, new(json.RawMessage))
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("is not valid JSON: %v (column %d)", se, se.Offset)
	}
	return fmt.Sprintf("is not valid JSON: %v", err)
}

// subObject returns members a and b of raw, the value of the member name;
// both are absent when raw is (nil).
func subObject(raw []byte, name, a, b string) (members, error) {
	if raw == nil {
		return members{}, nil
	}
	sub, ok := findMembers(raw, a, b)
	if !ok {
		return sub, &KeyError{Field: name, Text: shorten(string(raw)), Reason: reasonNotObject}
	}
	return sub, nil
}

// pick returns the primary value if present, else the fallback, with the
// dotted name of the one it took. Both absent is a "missing" KeyError.
func pick(primary []byte, pName string, fallback []byte, fName string) ([]byte, string, error) {
	switch {
	case primary != nil:
		return primary, pName, nil
	case fallback != nil:
		return fallback, fName, nil
	}
	return nil, "", &KeyError{Field: pName, Reason: "is missing (and so is " + fName + ")"}
}

// jsonText returns the text a JSON number or string stands for.
func jsonText(raw []byte, name string) (string, error) {
	switch {
	case len(raw) > 1 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0:
		return string(raw[1 : len(raw)-1]), nil
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

func jsonTimestamp(raw []byte, name string) (Timestamp, error) {
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

func jsonSeqNum(raw []byte, name string) (SeqNum, error) {
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
func renamed(err error, name string, raw []byte) error {
	var ke *KeyError
	if !errors.As(err, &ke) {
		return err
	}
	return &KeyError{Field: name, Text: shorten(string(raw)), Reason: ke.Reason}
}
